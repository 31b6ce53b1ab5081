package io.kv4j.server;

import io.kv4j.Store;
import io.kv4j.Stores;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

/**
 * Starts kv4j-server: {@code java -jar kv4j-server.jar [options] ENGINE_URI}, e.g. {@code
 * hashlog:/data/kv?durability=buffered}; {@code --help} lists the options with their defaults and
 * units. A bad option, a store that cannot be opened or a port that cannot be bound prints one line
 * on standard error and exits with a non-zero status (2 for usage, 1 otherwise), after closing the
 * store.
 */
public final class Main {
  private Main() {}

  /** What {@link #launch} did: a running server, or an exit status. */
  record Launch(int exitCode, RespServer server) {}

  /**
   * Parses the command line, opens the store and serves it until the process is stopped.
   *
   * @param args command-line arguments, see the class description
   * @throws InterruptedException if interrupted while serving
   */
  public static void main(String[] args) throws InterruptedException {
    Launch l = launch(args, System.out, System.err);
    if (l.server() == null) {
      System.exit(l.exitCode());
      return;
    }
    RespServer server = l.server();
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  server.close();
                  server.store().close();
                  stopped.countDown();
                },
                "kv4j-server-shutdown"));
    stopped.await();
  }

  /**
   * Everything main does except waiting: returns the running server, or the exit status after
   * printing one line (the store, if it was opened, is closed again).
   */
  static Launch launch(String[] args, PrintStream out, PrintStream err) {
    StderrLog.install();
    if (System.getProperty("io.netty.leakDetection.level") == null) {
      // Leak tracking is for tests; the server's buffers are released on every path.
      System.setProperty("io.netty.leakDetection.level", "disabled");
    }
    CommandLine line;
    try {
      line = parse(args);
      if (line == null) {
        usage(out);
        return new Launch(0, null);
      }
    } catch (IllegalArgumentException e) {
      err.println("kv4j-server: " + e.getMessage());
      return new Launch(2, null);
    }
    ServerOptions options = line.options();
    try {
      InetAddress.getAllByName(options.bind());
    } catch (UnknownHostException e) {
      err.println("kv4j-server: --bind: unknown address " + options.bind());
      return new Launch(2, null);
    }
    Store store;
    try {
      store = Stores.open(line.uri());
    } catch (Throwable e) {
      err.println("kv4j-server: cannot open store " + line.uri() + ": " + e.getMessage());
      return new Launch(1, null);
    }
    RespServer server;
    try {
      server =
          RespServer.start(store, options, () -> Stores.open(line.uri()), Writers.ofOpened(store));
    } catch (Throwable e) {
      try {
        store.close();
      } catch (Throwable c) {
        e.addSuppressed(c);
      }
      err.println("kv4j-server: " + e.getMessage());
      return new Launch(1, null);
    }
    announce(server, store, line, out, err);
    return new Launch(0, server);
  }

  /** The parsed command line: the options and the store URI. */
  private record CommandLine(ServerOptions options, String uri, List<String> warnings) {}

  /**
   * Parses the command line; null when it asks for --help.
   *
   * @throws IllegalArgumentException naming the option that is wrong
   */
  private static CommandLine parse(String[] args) {
    ServerOptions options = ServerOptions.defaults();
    List<String> warnings = new ArrayList<>();
    String uri = null;
    Path tlsCert = null;
    Path tlsKey = null;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      switch (a) {
        case "-p" -> options = options.with(ServerOptions.Setting.PORT, integer(args, ++i, a));
        case "--bind", "-b" -> options = options.withBind(value(args, ++i, a));
        case "--requirepass" -> options = options.withRequirePass(value(args, ++i, a));
        case "--requirepass-file" -> {
          Path f = Path.of(value(args, ++i, a));
          options = options.withRequirePass(firstLine(f, a));
          privateFile(f, a, warnings);
        }
        case "--user" -> options = options.withUser(value(args, ++i, a));
        case "--users-file" -> {
          Path f = Path.of(value(args, ++i, a));
          options = usersFile(f, a, options);
          privateFile(f, a, warnings);
        }
        case "--protected-mode" -> options = options.withProtectedMode(yesNo(args, ++i, a));
        case "--tls-cert-file" -> tlsCert = file(args, ++i, a);
        case "--tls-key-file" -> tlsKey = file(args, ++i, a);
        case "--nio" -> options = options.withNativeTransport(false);
        case "--loop-commands" -> options = options.withLoopCommands(value(args, ++i, a));
        case "--help", "-h" -> {
          return null;
        }
        default -> {
          ServerOptions.Setting number = ServerOptions.Setting.of(a);
          if (number != null) {
            options =
                options.with(number, number.bytes ? bytes(args, ++i, a) : integer(args, ++i, a));
          } else if (a.startsWith("-")) {
            throw new IllegalArgumentException("unknown option " + a + " (see --help)");
          } else if (uri != null) {
            throw new IllegalArgumentException(
                "one ENGINE_URI expected, got '" + uri + "' and '" + a + "'");
          } else {
            uri = a;
          }
        }
      }
    }
    if (uri == null) {
      throw new IllegalArgumentException("ENGINE_URI missing (see --help)");
    }
    if (tlsCert != null || tlsKey != null) {
      options = options.withTls(tlsCert, tlsKey);
    }
    if (!options.users().isEmpty() && options.requirePassHash() == null) {
      warnings.add(
          "kv4j-server: WARNING: ACL users are set but the default user has no password"
              + " (--requirepass): any client that does not AUTH is the default user and may read"
              + " and write every key — from loopback, and from anywhere if protected mode is"
              + " off.");
    }
    return new CommandLine(options, uri, List.copyOf(warnings));
  }

  /**
   * Adds the users of {@code file}: one {@code NAME:rw|ro:PASSWORD} per line, blank lines and lines
   * starting with {@code #} skipped. Errors name the line, never its text (it holds a password).
   */
  private static ServerOptions usersFile(Path file, String flag, ServerOptions options) {
    List<String> lines;
    try {
      lines = Files.readAllLines(file);
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException(flag + ": cannot read " + file + ": " + e.getMessage());
    }
    ServerOptions o = options;
    int n = 0;
    for (String line : lines) {
      n++;
      String t = line.strip();
      if (t.isEmpty() || t.startsWith("#")) {
        continue;
      }
      o =
          o.withUser(
              line,
              flag + " " + file + " line " + n,
              "(the line is not shown: it holds a password)");
    }
    return o;
  }

  /** Warns when a file holding passwords can be read by other users. */
  private static void privateFile(Path file, String flag, List<String> warnings) {
    try {
      Set<PosixFilePermission> p = Files.getPosixFilePermissions(file);
      if (p.contains(PosixFilePermission.GROUP_READ)
          || p.contains(PosixFilePermission.OTHERS_READ)) {
        warnings.add(
            "kv4j-server: WARNING: "
                + flag
                + " "
                + file
                + " can be read by other users (chmod 600 it): it holds passwords.");
      }
    } catch (UnsupportedOperationException | java.io.IOException e) {
      // Not a POSIX file system: nothing to say.
    }
  }

  /** Prints the listening line, and the WARNING when the server is reachable without password. */
  private static void announce(
      RespServer server, Store store, CommandLine line, PrintStream out, PrintStream err) {
    ServerOptions options = line.options();
    for (String w : line.warnings()) {
      err.println(w);
    }
    if (server.bindsBeyondLoopback() && options.requirePassHash() == null) {
      err.println(
          "kv4j-server: WARNING: listening on "
              + server.address()
              + " beyond loopback with no password. "
              + (options.protectedMode()
                  ? "Protected mode is on: clients not on loopback are refused (-DENIED) until"
                      + " --requirepass is set."
                  : "Protected mode is OFF: anyone who can reach this port can read, write and"
                      + " delete every key.")
              + (server.tls() ? "" : " Traffic is not encrypted (see --tls-cert-file)."));
    }
    out.println(
        "kv4j-server listening on "
            + server.address()
            + (server.tls() ? " (TLS)" : "")
            + " ("
            + store.info().describe()
            + ", transport "
            + server.transport
            + ", "
            + server.threads
            + " event loop threads, "
            + options.workers()
            + " workers, commands on the event loops: "
            + server.commands.loopMode()
            + ", maxclients "
            + server.maxClients
            + ")");
    out.flush();
  }

  private static String value(String[] args, int i, String flag) {
    if (i >= args.length) {
      throw new IllegalArgumentException(flag + " needs a value");
    }
    return args[i];
  }

  private static int integer(String[] args, int i, String flag) {
    String v = value(args, i, flag);
    try {
      return Integer.parseInt(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(flag + ": not a whole number: '" + v + "'");
    }
  }

  /** A byte count: digits with an optional k, m, g suffix (binary units, as Redis). */
  static long bytes(String[] args, int i, String flag) {
    String v = value(args, i, flag).trim().toLowerCase(java.util.Locale.ROOT);
    long unit = 1;
    String digits = v;
    if (v.endsWith("kb") || v.endsWith("mb") || v.endsWith("gb")) {
      digits = v.substring(0, v.length() - 2);
    } else if (v.endsWith("k") || v.endsWith("m") || v.endsWith("g")) {
      digits = v.substring(0, v.length() - 1);
    }
    if (digits.length() < v.length()) {
      char u = v.charAt(digits.length());
      unit = u == 'k' ? 1024L : u == 'm' ? 1024L * 1024 : 1024L * 1024 * 1024;
    }
    try {
      long n = Long.parseLong(digits);
      if (n < 0) {
        throw new IllegalArgumentException(flag + ": must not be negative: '" + v + "'");
      }
      return Math.multiplyExact(n, unit);
    } catch (NumberFormatException | ArithmeticException e) {
      throw new IllegalArgumentException(
          flag + ": not a byte count (e.g. 1048576, 512k, 64mb, 1g): '" + v + "'");
    }
  }

  private static boolean yesNo(String[] args, int i, String flag) {
    String v = value(args, i, flag);
    if (v.equalsIgnoreCase("yes")) {
      return true;
    }
    if (v.equalsIgnoreCase("no")) {
      return false;
    }
    throw new IllegalArgumentException(flag + " wants yes or no, got '" + v + "'");
  }

  private static Path file(String[] args, int i, String flag) {
    Path p = Path.of(value(args, i, flag));
    if (!Files.isReadable(p)) {
      throw new IllegalArgumentException(flag + ": cannot read " + p);
    }
    return p;
  }

  private static String firstLine(Path p, String flag) {
    try {
      String s = Files.readString(p).lines().findFirst().orElse("");
      if (s.isEmpty()) {
        throw new IllegalArgumentException(flag + ": " + p + " has no password on its first line");
      }
      return s;
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException(flag + ": cannot read " + p + ": " + e.getMessage());
    }
  }

  private static void usage(PrintStream out) {
    out.println(
        "usage: kv4j-server [options] ENGINE_URI\n"
            + "  ENGINE_URI: memory: | hashlog:/dir | lsm:/dir | lmdb:/dir | sqlite:/dir,\n"
            + "              with ?durability=sync|buffered and engine options\n"
            + "listening:\n"
            + "  --port N                     TCP port (6380; 0 = any free port)\n"
            + "  --bind ADDR                  address to listen on (127.0.0.1)\n"
            + "  --threads N                  event-loop threads (0 = cores)\n"
            + "  --workers N                  threads that run commands (32; 0 = event loops)\n"
            + "  --nio                        NIO instead of native epoll\n"
            + "  --loop-commands auto|reads|none  which commands run on the event loops: those\n"
            + "                               the engine never blocks on (auto), only its reads,\n"
            + "                               or none (every command on the workers)\n"
            + "access control:\n"
            + "  --requirepass PW             password of the default user (none)\n"
            + "  --requirepass-file FILE      same, read from the first line of FILE\n"
            + "  --user NAME:rw|ro:PW         a named user, read-write or read-only (repeatable)\n"
            + "  --users-file FILE            users from FILE, one NAME:rw|ro:PW per line\n"
            + "                               (keeps passwords out of ps; # comments)\n"
            + "  --protected-mode yes|no      without a password, refuse non-loopback clients (yes)\n"
            + "  --auth-timeout S             close clients that must authenticate and have not\n"
            + "                               after S seconds (10; 0 = never)\n"
            + "  --tls-cert-file F --tls-key-file F   serve TLS only (PEM certificate chain and\n"
            + "                               PKCS#8 key)\n"
            + "limits (bytes accept k/m/g suffixes, binary units):\n"
            + "  --maxclients N               connected clients (10000, lowered to fit ulimit -n)\n"
            + "  --timeout S                  close clients idle S seconds (0 = never)\n"
            + "  --request-timeout S          close clients whose partial request stalls S\n"
            + "                               seconds (60; 0 = never)\n"
            + "  --proto-max-bulk-len BYTES   one argument (512m; also capped by the engine)\n"
            + "  --max-request-size BYTES     all arguments of one request (512m)\n"
            + "  --client-query-buffer-limit BYTES  input buffered per client (1g)\n"
            + "  --total-query-buffer-limit BYTES   input buffered by all clients (-Xmx / 4)\n"
            + "store health:\n"
            + "  --reopen-interval S          reopen a store whose writes failed every S\n"
            + "                               seconds (10; 0 = never)");
  }
}
