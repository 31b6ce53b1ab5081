package io.kv4j.server;

import io.kv4j.Store;
import io.kv4j.Stores;
import java.io.PrintStream;
import java.util.concurrent.CountDownLatch;

/**
 * Starts kv4j-server: {@code java -jar kv4j-server.jar [--port N] [--bind ADDR] [--threads N]
 * [--max-request-size BYTES] [--nio] ENGINE_URI}, e.g. {@code
 * hashlog:/data/kv?durability=buffered}.
 */
public final class Main {
  private Main() {}

  /**
   * Parses the command line, opens the store and serves it until the process is stopped.
   *
   * @param args command-line arguments, see the class description
   * @throws Exception when the store cannot be opened or the port cannot be bound
   */
  public static void main(String[] args) throws Exception {
    if (System.getProperty("io.netty.leakDetection.level") == null) {
      // Leak tracking is for tests; the server's buffers are released on every path.
      System.setProperty("io.netty.leakDetection.level", "disabled");
    }
    ServerOptions options = ServerOptions.defaults();
    String uri = null;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      switch (a) {
        case "--port", "-p" -> options = options.withPort(Integer.parseInt(value(args, ++i, a)));
        case "--bind", "-b" -> options = options.withBind(value(args, ++i, a));
        case "--threads" -> options = options.withThreads(Integer.parseInt(value(args, ++i, a)));
        case "--max-request-size" ->
            options = options.withMaxRequestBytes(Long.parseLong(value(args, ++i, a)));
        case "--nio" -> options = options.withNativeTransport(false);
        case "--help", "-h" -> {
          usage(System.out);
          return;
        }
        default -> {
          if (a.startsWith("-") || uri != null) {
            usage(System.err);
            System.exit(2);
          }
          uri = a;
        }
      }
    }
    if (uri == null) {
      usage(System.err);
      System.exit(2);
    }
    Store store = Stores.open(uri);
    RespServer server;
    try {
      server = RespServer.start(store, options);
    } catch (RuntimeException | InterruptedException e) {
      store.close();
      throw e;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  server.close();
                  store.close();
                  stopped.countDown();
                },
                "kv4j-server-shutdown"));
    System.out.println(
        "kv4j-server listening on "
            + server.address()
            + " ("
            + store.info().describe()
            + ", transport "
            + server.transport
            + ", "
            + server.threads
            + " event loop threads)");
    stopped.await();
  }

  private static String value(String[] args, int i, String flag) {
    if (i >= args.length) {
      throw new IllegalArgumentException(flag + " needs a value");
    }
    return args[i];
  }

  private static void usage(PrintStream out) {
    out.println(
        "usage: kv4j-server [--port N (6380)] [--bind ADDR (127.0.0.1)] [--threads N (cores)]\n"
            + "                   [--max-request-size BYTES (536870912)] [--nio] ENGINE_URI\n"
            + "  ENGINE_URI: memory: | hashlog:/dir | lsm:/dir | lmdb:/dir | sqlite:/dir,\n"
            + "              with ?durability=sync|buffered and engine options");
  }
}
