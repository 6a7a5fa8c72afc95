import com.almworks.sqlite4java.SQLiteConnection;
import com.almworks.sqlite4java.SQLiteJob;
import com.almworks.sqlite4java.SQLiteQueue;
import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.AbstractLocalDynamoDBServerHandler;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
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
 * On disk (`-dbPath`), the database is switched to SQLite's write-ahead log, still synced at
 * every write (see writeAheadLog).
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
    Server server = (Server) field(proxy, DynamoDBProxyServer.class, "server");
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
    if (Arrays.asList(args).contains("-dbPath")) writeAheadLog(proxy);
    int boundPort = ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    System.out.println("{\"listening\":{\"host\":\"" + HOST + "\",\"port\":" + boundPort + "}}");
    System.out.flush();

    while (System.in.read() != -1) {
      // Nothing is sent on stdin; end of input means the parent is gone.
    }
    System.exit(0);
  }

  /**
   * DynamoDB Local 1.25.1 leaves its SQLite file in rollback-journal mode: every write creates,
   * syncs and deletes a journal beside the file and syncs the file itself. In write-ahead-log mode
   * a write appends to the log and syncs it once. synchronous stays FULL, so a write is on the
   * disk before DynamoDB Local answers it, as before: the table is what a far-path event's
   * acceptance rests on (ingest deletes the request once its record is written), so not even a
   * power cut may lose an answered write. (The SNS/SQS emulator syncs only at its checkpoints:
   * docs/operators/local-service.md says what a power cut may cost there.)
   *
   * The database belongs to one SQLiteQueue, whose thread alone may use its connection; the
   * pragmas run there, before the first request. The path to it is private in 1.25.1:
   * DynamoDBProxyServer.serverHandler.primaryHandler.getHandler(key), which with -sharedDb makes
   * or returns the one client whatever the key, then LocalDBClient.dbAccess.queue.
   */
  static void writeAheadLog(DynamoDBProxyServer proxy) throws Exception {
    Object serverHandler = field(proxy, DynamoDBProxyServer.class, "serverHandler");
    Object requestHandler = field(serverHandler, AbstractLocalDynamoDBServerHandler.class, "primaryHandler");
    Method getHandler = requestHandler.getClass().getDeclaredMethod("getHandler", String.class);
    getHandler.setAccessible(true);
    Object client = getHandler.invoke(requestHandler, "local");
    Object dbAccess = field(client, client.getClass(), "dbAccess");
    SQLiteQueue queue = (SQLiteQueue) field(dbAccess, dbAccess.getClass(), "queue");
    String mode = queue.execute(new SQLiteJob<String>() {
      @Override
      protected String job(SQLiteConnection connection) throws Throwable {
        connection.exec("PRAGMA synchronous = FULL");
        var statement = connection.prepare("PRAGMA journal_mode = WAL");
        try {
          statement.step();
          return statement.columnString(0);
        } finally {
          statement.dispose();
        }
      }
    }).complete();
    if (!"wal".equalsIgnoreCase(mode)) throw new IllegalStateException("DynamoDB Local's database stayed in journal mode " + mode);
  }

  private static Object field(Object owner, Class<?> declaredIn, String name) throws ReflectiveOperationException {
    Field field = declaredIn.getDeclaredField(name);
    field.setAccessible(true);
    return field.get(owner);
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
