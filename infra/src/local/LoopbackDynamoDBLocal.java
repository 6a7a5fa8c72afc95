import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * Runs the official DynamoDB Local server (same arguments as its jar, without `-port`) bound to
 * 127.0.0.1: the jar has no host option and listens on every interface. The port is picked by the
 * system when the socket is bound (the jar's `-port` rejects 0), so no other process can take it
 * between choosing and binding.
 *
 * Prints {"listening":{"host":"127.0.0.1","port":N}} on stdout once requests are accepted, and
 * exits when stdin closes: the parent holds the other end, so the server never outlives it.
 */
public final class LoopbackDynamoDBLocal {
  private static final String HOST = "127.0.0.1";

  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    // DynamoDB Local 1.25.1 keeps its Jetty server in a private field; only the host is changed.
    Field serverField = DynamoDBProxyServer.class.getDeclaredField("server");
    serverField.setAccessible(true);
    Server server = (Server) serverField.get(proxy);
    for (Connector connector : server.getConnectors()) {
      ((ServerConnector) connector).setHost(HOST);
      ((ServerConnector) connector).setPort(0);
    }
    proxy.start();
    int port = ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    System.out.println("{\"listening\":{\"host\":\"" + HOST + "\",\"port\":" + port + "}}");
    System.out.flush();

    while (System.in.read() != -1) {
      // Nothing is sent on stdin; end of input means the parent is gone.
    }
    System.exit(0);
  }
}
