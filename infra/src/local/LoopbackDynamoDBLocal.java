import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import java.io.IOException;
import java.lang.reflect.Field;
import java.net.BindException;
import java.util.Arrays;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * Runs the official DynamoDB Local server bound to 127.0.0.1: the jar has no host option and
 * listens on every interface. Arguments are the jar's, with `-port N` first; port 0 lets the
 * system pick one when the socket is bound (the jar's own `-port` rejects 0), so no other process
 * can take it between choosing and binding.
 *
 * Prints {"listening":{"host":"127.0.0.1","port":N}} on stdout once requests are accepted, or
 * {"portInUse":{"host":"127.0.0.1","port":N}} and exits 1 when the port is taken. Exits when
 * stdin closes: the parent holds the other end, so the server never outlives it.
 */
public final class LoopbackDynamoDBLocal {
  private static final String HOST = "127.0.0.1";

  public static void main(String[] args) throws Exception {
    if (args.length < 2 || !args[0].equals("-port")) {
      throw new IllegalArgumentException("usage: LoopbackDynamoDBLocal -port N [DynamoDB Local arguments]");
    }
    int port = Integer.parseInt(args[1]);
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(Arrays.copyOfRange(args, 2, args.length));
    // DynamoDB Local 1.25.1 keeps its Jetty server in a private field; only host and port are changed.
    Field serverField = DynamoDBProxyServer.class.getDeclaredField("server");
    serverField.setAccessible(true);
    Server server = (Server) serverField.get(proxy);
    for (Connector connector : server.getConnectors()) {
      ServerConnector serverConnector = (ServerConnector) connector;
      serverConnector.setHost(HOST);
      serverConnector.setPort(port);
      // Bound here rather than in start(), which would only log a bind failure and carry on.
      try {
        serverConnector.open();
      } catch (IOException error) {
        if (!(error.getCause() instanceof BindException)) throw error;
        System.out.println("{\"portInUse\":{\"host\":\"" + HOST + "\",\"port\":" + port + "}}");
        System.out.flush();
        System.exit(1);
      }
    }
    proxy.start();
    int boundPort = ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    System.out.println("{\"listening\":{\"host\":\"" + HOST + "\",\"port\":" + boundPort + "}}");
    System.out.flush();

    while (System.in.read() != -1) {
      // Nothing is sent on stdin; end of input means the parent is gone.
    }
    System.exit(0);
  }
}
