package io.kv4j.server;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Everything the command line sets: listening address, threads, access control and limits.
 * Immutable; every {@code with...} returns a changed copy and checks its argument
 * (IllegalArgumentException naming the option, so Main can print it as one line). The numeric
 * options are one table, {@link Setting}, which Main also parses by. Defaults and units are those
 * of the usage text and server/README.md; where Redis has the same setting, the name and the
 * default are Redis's.
 */
final class ServerOptions {
  static final long MIB = 1024L * 1024;
  static final long GIB = 1024L * MIB;

  /** An ACL user: a name, a password (kept as its SHA-256), and whether it may write. */
  record User(String name, byte[] passwordHash, boolean readOnly) {
    User {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(passwordHash, "passwordHash");
    }

    boolean passwordMatches(byte[] password) {
      // Comparing hashes of equal length in constant time: no timing signal about the password.
      return MessageDigest.isEqual(passwordHash, sha256(password));
    }
  }

  /**
   * The numeric options: each one's flag, how the command line writes its value, its range and its
   * default. A value outside the range is refused with an IllegalArgumentException naming the flag,
   * the range and the value.
   */
  enum Setting {
    PORT("--port", false, 0, 65535, 6380),
    THREADS("--threads", false, 0, 1024, 0),
    /** Worker threads that run commands (0: run them on the event loops). */
    WORKERS("--workers", false, 0, 4096, 32),
    /** Limit on the sum of the bulk lengths of one request, bytes; lowers MAX_BULK_BYTES to it. */
    MAX_REQUEST_BYTES("--max-request-size", true, 1024, Long.MAX_VALUE, 512 * MIB),
    /** Limit on one bulk string (Redis: proto-max-bulk-len, 512 MiB), bytes. */
    MAX_BULK_BYTES("--proto-max-bulk-len", true, 1024, Long.MAX_VALUE, 512 * MIB),
    /** Limit on the input one client has buffered (Redis: client-query-buffer-limit, 1 GiB). */
    CLIENT_QUERY_BUFFER_LIMIT("--client-query-buffer-limit", true, MIB, 2047 * MIB, GIB),
    /** Limit on the input all clients together have buffered, bytes (a quarter of -Xmx). */
    TOTAL_QUERY_BUFFER_LIMIT(
        "--total-query-buffer-limit",
        true,
        MIB,
        Long.MAX_VALUE,
        Runtime.getRuntime().maxMemory() / 4),
    /** Limit on connected clients (Redis: maxclients, 10000); lowered to fit the fd limit. */
    MAX_CLIENTS("--maxclients", false, 1, 1_000_000, 10_000),
    /** Seconds a client may stay idle before it is closed (Redis: timeout, 0 = never). */
    IDLE_TIMEOUT("--timeout", false, 0, 365 * 86400, 0),
    /** Seconds a partly received request may stall before its client is closed (0 = never). */
    REQUEST_TIMEOUT("--request-timeout", false, 0, 365 * 86400, 60),
    /**
     * Seconds a client that must authenticate may stay connected without doing so (0 = forever).
     */
    AUTH_TIMEOUT("--auth-timeout", false, 0, 86400, 10),
    /** Seconds between attempts to reopen a store that failed its writes (0 = never). */
    REOPEN_INTERVAL("--reopen-interval", false, 0, 86400, 10);

    /** The command-line flag, named in every error. */
    final String flag;

    /** Whether the value is a byte count ({@code 64mb}) rather than a whole number. */
    final boolean bytes;

    final long min;
    final long max;
    final long defaultValue;

    Setting(String flag, boolean bytes, long min, long max, long defaultValue) {
      this.flag = flag;
      this.bytes = bytes;
      this.min = min;
      this.max = max;
      this.defaultValue = defaultValue;
    }

    /** The setting of a flag, or null. */
    static Setting of(String flag) {
      for (Setting s : values()) {
        if (s.flag.equals(flag)) {
          return s;
        }
      }
      return null;
    }

    long check(long v) {
      if (max == Long.MAX_VALUE && v < min) {
        throw new IllegalArgumentException(flag + " must be at least " + min + ", got " + v);
      }
      if (v < min || v > max) {
        throw new IllegalArgumentException(
            flag + " must be between " + min + " and " + max + ", got " + v);
      }
      return v;
    }
  }

  private static final Setting[] SETTINGS = Setting.values();

  private String bind = "127.0.0.1";
  private final long[] numbers = new long[SETTINGS.length];
  private boolean nativeTransport = true;
  private String loopCommands = "auto";
  private final int maxArgs = 1024 * 1024;
  private final int maxInlineBytes = 64 * 1024;
  private byte[] requirePassHash;
  private List<User> users = List.of();
  private boolean protectedMode = true;
  private Path tlsCertFile;
  private Path tlsKeyFile;

  private ServerOptions() {
    for (Setting s : SETTINGS) {
      numbers[s.ordinal()] = s.defaultValue;
    }
  }

  static ServerOptions defaults() {
    return new ServerOptions();
  }

  private ServerOptions copy() {
    ServerOptions c = new ServerOptions();
    c.bind = bind;
    System.arraycopy(numbers, 0, c.numbers, 0, numbers.length);
    c.nativeTransport = nativeTransport;
    c.loopCommands = loopCommands;
    c.requirePassHash = requirePassHash;
    c.users = users;
    c.protectedMode = protectedMode;
    c.tlsCertFile = tlsCertFile;
    c.tlsKeyFile = tlsKeyFile;
    return c;
  }

  static byte[] sha256(byte[] b) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(b);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }

  /**
   * A copy with a numeric option changed.
   *
   * @throws IllegalArgumentException naming the flag, its range and {@code v}, when out of range
   */
  ServerOptions with(Setting s, long v) {
    ServerOptions c = copy();
    c.numbers[s.ordinal()] = s.check(v);
    if (s == Setting.MAX_REQUEST_BYTES) {
      // One bulk string cannot exceed the request that carries it.
      c.numbers[Setting.MAX_BULK_BYTES.ordinal()] = Math.min(maxBulkBytes(), v);
    }
    return c;
  }

  private long get(Setting s) {
    return numbers[s.ordinal()];
  }

  // ---- listening ----

  String bind() {
    return bind;
  }

  ServerOptions withBind(String b) {
    if (b == null || b.isBlank()) {
      throw new IllegalArgumentException("--bind needs an address");
    }
    ServerOptions c = copy();
    c.bind = b;
    return c;
  }

  int port() {
    return (int) get(Setting.PORT);
  }

  int threads() {
    return (int) get(Setting.THREADS);
  }

  /** See {@link Setting#WORKERS}. */
  int workers() {
    return (int) get(Setting.WORKERS);
  }

  boolean nativeTransport() {
    return nativeTransport;
  }

  ServerOptions withNativeTransport(boolean n) {
    ServerOptions c = copy();
    c.nativeTransport = n;
    return c;
  }

  /**
   * Which commands may run on the event loops instead of the workers: {@code auto} (those the
   * engine runs without waiting, see {@link EngineBlocking}), {@code reads} (only reads and
   * connection commands), {@code none} (every command on the workers).
   */
  String loopCommands() {
    return loopCommands;
  }

  ServerOptions withLoopCommands(String policy) {
    if (!List.of("auto", "reads", "none").contains(policy)) {
      throw new IllegalArgumentException(
          "--loop-commands wants auto, reads or none, got '" + policy + "'");
    }
    ServerOptions c = copy();
    c.loopCommands = policy;
    return c;
  }

  // ---- request limits ----

  /** See {@link Setting#MAX_REQUEST_BYTES}. */
  long maxRequestBytes() {
    return get(Setting.MAX_REQUEST_BYTES);
  }

  /** See {@link Setting#MAX_BULK_BYTES}. */
  long maxBulkBytes() {
    return get(Setting.MAX_BULK_BYTES);
  }

  /** Limit on the number of arguments of one request (Redis: 1024 * 1024). */
  int maxArgs() {
    return maxArgs;
  }

  /** Limit on the arguments of a request from a client that has not authenticated (Redis: 10). */
  static final int UNAUTHENTICATED_MAX_ARGS = 10;

  /** Limit on one argument from a client that has not authenticated (Redis: 16 KiB), bytes. */
  static final int UNAUTHENTICATED_MAX_BULK = 16 * 1024;

  /** See {@link Setting#AUTH_TIMEOUT}. */
  int authTimeoutSeconds() {
    return (int) get(Setting.AUTH_TIMEOUT);
  }

  /** Limit on an inline (telnet-style) request line (Redis: 64 KiB), bytes. */
  int maxInlineBytes() {
    return maxInlineBytes;
  }

  /** See {@link Setting#CLIENT_QUERY_BUFFER_LIMIT}. */
  long clientQueryBufferLimit() {
    return get(Setting.CLIENT_QUERY_BUFFER_LIMIT);
  }

  /** See {@link Setting#TOTAL_QUERY_BUFFER_LIMIT}. */
  long totalQueryBufferLimit() {
    return get(Setting.TOTAL_QUERY_BUFFER_LIMIT);
  }

  /** See {@link Setting#MAX_CLIENTS}. */
  int maxClients() {
    return (int) get(Setting.MAX_CLIENTS);
  }

  /** See {@link Setting#IDLE_TIMEOUT}. */
  int idleTimeoutSeconds() {
    return (int) get(Setting.IDLE_TIMEOUT);
  }

  /** See {@link Setting#REQUEST_TIMEOUT}. */
  int requestTimeoutSeconds() {
    return (int) get(Setting.REQUEST_TIMEOUT);
  }

  // ---- access control ----

  /** SHA-256 of the default user's password, or null when the default user needs none. */
  byte[] requirePassHash() {
    return requirePassHash;
  }

  ServerOptions withRequirePass(String password) {
    if (password == null || password.isEmpty()) {
      throw new IllegalArgumentException("--requirepass needs a non-empty password");
    }
    ServerOptions c = copy();
    c.requirePassHash = sha256(password.getBytes(StandardCharsets.UTF_8));
    return c;
  }

  List<User> users() {
    return users;
  }

  /**
   * Adds a named user from {@code name:rw:password} or {@code name:ro:password} (the password is
   * everything after the second colon).
   */
  ServerOptions withUser(String spec) {
    return withUser(spec, "--user", "got '" + spec + "'");
  }

  /**
   * Adds a named user as {@link #withUser(String)} does; errors start with {@code where} and end
   * with {@code shown} (what of the line may be shown: a line of a file is not, it holds a
   * password).
   */
  ServerOptions withUser(String spec, String where, String shown) {
    String[] p = spec == null ? new String[0] : spec.split(":", 3);
    if (p.length != 3
        || p[0].isEmpty()
        || p[2].isEmpty()
        || !(p[1].equals("rw") || p[1].equals("ro"))) {
      throw new IllegalArgumentException(
          where + " wants NAME:rw:PASSWORD or NAME:ro:PASSWORD, " + shown);
    }
    if (p[0].equals("default")) {
      throw new IllegalArgumentException(
          where + ": user default: use --requirepass for the default user");
    }
    for (User u : users) {
      if (u.name().equals(p[0])) {
        throw new IllegalArgumentException(where + ": user " + p[0] + " is given twice");
      }
    }
    for (int i = 0; i < p[0].length(); i++) {
      char ch = p[0].charAt(i);
      if (ch <= ' ' || ch > '~') {
        throw new IllegalArgumentException(where + ": user name must be printable ASCII");
      }
    }
    ServerOptions c = copy();
    List<User> all = new ArrayList<>(users);
    all.add(new User(p[0], sha256(p[2].getBytes(StandardCharsets.UTF_8)), p[1].equals("ro")));
    c.users = List.copyOf(all);
    return c;
  }

  /** Redis's protected mode: without a default password, refuse clients not on loopback. */
  boolean protectedMode() {
    return protectedMode;
  }

  ServerOptions withProtectedMode(boolean on) {
    ServerOptions c = copy();
    c.protectedMode = on;
    return c;
  }

  Path tlsCertFile() {
    return tlsCertFile;
  }

  Path tlsKeyFile() {
    return tlsKeyFile;
  }

  ServerOptions withTls(Path cert, Path key) {
    ServerOptions c = copy();
    c.tlsCertFile = cert;
    c.tlsKeyFile = key;
    return c;
  }

  // ---- store health ----

  /** See {@link Setting#REOPEN_INTERVAL}. */
  int reopenIntervalSeconds() {
    return (int) get(Setting.REOPEN_INTERVAL);
  }
}
