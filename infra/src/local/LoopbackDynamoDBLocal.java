import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import java.io.IOException;
import java.lang.reflect.Field;
import java.net.BindException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.regex.Pattern;
import javax.servlet.ServletException;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.HandlerWrapper;

/**
 * Runs the official DynamoDB Local server bound to 127.0.0.1: the jar has no host option and
 * listens on every interface. Arguments are the jar's, with `-port N` first; port 0 lets the
 * system pick one when the socket is bound (the jar's own `-port` rejects 0), so no other process
 * can take it between choosing and binding. Every request passes AccessGuard first: only signed
 * requests from this machine, never a browser's, reach DynamoDB Local.
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
    AccessGuard guard = new AccessGuard();
    guard.setHandler(server.getHandler());
    server.setHandler(guard);
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

  /**
   * The rule of infra/src/local/emulator-access.ts, with the same refusals (the tests send both
   * emulators the same requests; that file says why each part is there). It runs before DynamoDB
   * Local reads the body, and answers no CORS preflight: DynamoDB Local's own would allow any
   * method and header asked for.
   */
  static final class AccessGuard extends HandlerWrapper {
    static final String NOT_LOOPBACK_PEER = "refused: not from the loopback address";
    static final String NOT_LOOPBACK_HOST = "refused: the Host header is not 127.0.0.1, localhost or [::1]";
    static final String FROM_BROWSER =
        "refused: a browser request (Origin header or CORS preflight); only AWS SDK and CLI calls are answered";
    static final String UNSIGNED =
        "refused: not signed with AWS Signature Version 4 (Authorization: AWS4-HMAC-SHA256 Credential=...)";

    private static final Pattern LOOPBACK_PEER = Pattern.compile("^(?:127\\.|::ffff:127\\.|::1$|0:0:0:0:0:0:0:1$)");
    private static final Pattern LOOPBACK_HOST =
        Pattern.compile("^(?:127\\.0\\.0\\.1|localhost|\\[::1\\])(?::\\d{1,5})?$", Pattern.CASE_INSENSITIVE);
    private static final Pattern SIGV4_AUTHORIZATION = Pattern.compile(
        "^AWS4-HMAC-SHA256 Credential=[^/\\s,]+/\\d{8}/[^/\\s,]+/[^/\\s,]+/aws4_request, ?SignedHeaders=[a-z0-9-]+(?:;[a-z0-9-]+)*, ?Signature=[0-9a-f]{64}$");

    static String refusal(HttpServletRequest request) {
      String peer = request.getRemoteAddr();
      if (peer == null || !LOOPBACK_PEER.matcher(peer).find()) return NOT_LOOPBACK_PEER;
      String host = request.getHeader("Host");
      if (host == null || !LOOPBACK_HOST.matcher(host).matches()) return NOT_LOOPBACK_HOST;
      if (request.getHeader("Origin") != null || "OPTIONS".equals(request.getMethod())) return FROM_BROWSER;
      String authorization = request.getHeader("Authorization");
      if (authorization == null || !SIGV4_AUTHORIZATION.matcher(authorization).matches()) return UNSIGNED;
      return null;
    }

    @Override
    public void handle(String target, Request baseRequest, HttpServletRequest request, HttpServletResponse response)
        throws IOException, ServletException {
      String refusal = refusal(request);
      if (refusal == null) {
        super.handle(target, baseRequest, request, response);
        return;
      }
      baseRequest.setHandled(true);
      byte[] body = refusal.getBytes(StandardCharsets.UTF_8);
      response.setStatus(HttpServletResponse.SC_FORBIDDEN);
      response.setContentType("text/plain; charset=utf-8");
      response.setContentLength(body.length);
      response.getOutputStream().write(body);
    }
  }
}
