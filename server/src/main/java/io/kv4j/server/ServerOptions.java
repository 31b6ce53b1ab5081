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
 * Immutable; every {@code withX} returns a changed copy and checks its argument
 * (IllegalArgumentException naming the option, so Main can print it as one line). Defaults and
 * units are those of the usage text and server/README.md; where Redis has the same setting, the
 * name and the default are Redis's.
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

  private String bind = "127.0.0.1";
  private int port = 6380;
  private int threads;
  private int workers = 32;
  private boolean nativeTransport = true;
  private long maxRequestBytes = 512 * MIB;
  private long maxBulkBytes = 512 * MIB;
  private int maxArgs = 1024 * 1024;
  private int maxInlineBytes = 64 * 1024;
  private long clientQueryBufferLimit = GIB;
  private long totalQueryBufferLimit = Runtime.getRuntime().maxMemory() / 4;
  private int maxClients = 10_000;
  private int idleTimeoutSeconds;
  private int requestTimeoutSeconds = 60;
  private byte[] requirePassHash;
  private List<User> users = List.of();
  private boolean protectedMode = true;
  private Path tlsCertFile;
  private Path tlsKeyFile;
  private int reopenIntervalSeconds = 10;

  private ServerOptions() {}

  static ServerOptions defaults() {
    return new ServerOptions();
  }

  private ServerOptions copy() {
    ServerOptions c = new ServerOptions();
    c.bind = bind;
    c.port = port;
    c.threads = threads;
    c.workers = workers;
    c.nativeTransport = nativeTransport;
    c.maxRequestBytes = maxRequestBytes;
    c.maxBulkBytes = maxBulkBytes;
    c.maxArgs = maxArgs;
    c.maxInlineBytes = maxInlineBytes;
    c.clientQueryBufferLimit = clientQueryBufferLimit;
    c.totalQueryBufferLimit = totalQueryBufferLimit;
    c.maxClients = maxClients;
    c.idleTimeoutSeconds = idleTimeoutSeconds;
    c.requestTimeoutSeconds = requestTimeoutSeconds;
    c.requirePassHash = requirePassHash;
    c.users = users;
    c.protectedMode = protectedMode;
    c.tlsCertFile = tlsCertFile;
    c.tlsKeyFile = tlsKeyFile;
    c.reopenIntervalSeconds = reopenIntervalSeconds;
    return c;
  }

  static byte[] sha256(byte[] b) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(b);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }

  private static long atLeast(String option, long v, long min) {
    if (v < min) {
      throw new IllegalArgumentException(option + " must be at least " + min + ", got " + v);
    }
    return v;
  }

  private static int range(String option, long v, int min, int max) {
    if (v < min || v > max) {
      throw new IllegalArgumentException(
          option + " must be between " + min + " and " + max + ", got " + v);
    }
    return (int) v;
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
    return port;
  }

  ServerOptions withPort(int p) {
    ServerOptions c = copy();
    c.port = range("--port", p, 0, 65535);
    return c;
  }

  int threads() {
    return threads;
  }

  ServerOptions withThreads(int t) {
    ServerOptions c = copy();
    c.threads = range("--threads", t, 0, 1024);
    return c;
  }

  /** Worker threads that run commands (0: run them on the event loops). */
  int workers() {
    return workers;
  }

  ServerOptions withWorkers(int w) {
    ServerOptions c = copy();
    c.workers = range("--workers", w, 0, 4096);
    return c;
  }

  boolean nativeTransport() {
    return nativeTransport;
  }

  ServerOptions withNativeTransport(boolean n) {
    ServerOptions c = copy();
    c.nativeTransport = n;
    return c;
  }

  // ---- request limits ----

  /** Limit on the sum of the bulk lengths of one request, bytes. */
  long maxRequestBytes() {
    return maxRequestBytes;
  }

  ServerOptions withMaxRequestBytes(long m) {
    ServerOptions c = copy();
    c.maxRequestBytes = atLeast("--max-request-size", m, 1024);
    c.maxBulkBytes = Math.min(maxBulkBytes, m);
    return c;
  }

  /** Limit on one bulk string (Redis: proto-max-bulk-len, 512 MiB), bytes. */
  long maxBulkBytes() {
    return maxBulkBytes;
  }

  ServerOptions withMaxBulkBytes(long m) {
    ServerOptions c = copy();
    c.maxBulkBytes = atLeast("--proto-max-bulk-len", m, 1024);
    return c;
  }

  /** Limit on the number of arguments of one request (Redis: 1024 * 1024). */
  int maxArgs() {
    return maxArgs;
  }

  /** Limit on an inline (telnet-style) request line (Redis: 64 KiB), bytes. */
  int maxInlineBytes() {
    return maxInlineBytes;
  }

  /** Limit on the input one client has buffered (Redis: client-query-buffer-limit, 1 GiB). */
  long clientQueryBufferLimit() {
    return clientQueryBufferLimit;
  }

  ServerOptions withClientQueryBufferLimit(long m) {
    ServerOptions c = copy();
    c.clientQueryBufferLimit = range("--client-query-buffer-limit", m, 1024 * 1024, 2047 << 20);
    return c;
  }

  /** Limit on the input all clients together have buffered, bytes (default: a quarter of -Xmx). */
  long totalQueryBufferLimit() {
    return totalQueryBufferLimit;
  }

  ServerOptions withTotalQueryBufferLimit(long m) {
    ServerOptions c = copy();
    c.totalQueryBufferLimit = atLeast("--total-query-buffer-limit", m, 1024 * 1024);
    return c;
  }

  /** Limit on connected clients (Redis: maxclients, 10000); lowered to fit the fd limit. */
  int maxClients() {
    return maxClients;
  }

  ServerOptions withMaxClients(int m) {
    ServerOptions c = copy();
    c.maxClients = range("--maxclients", m, 1, 1_000_000);
    return c;
  }

  /** Seconds a client may stay idle before it is closed (Redis: timeout, 0 = never). */
  int idleTimeoutSeconds() {
    return idleTimeoutSeconds;
  }

  ServerOptions withIdleTimeoutSeconds(int s) {
    ServerOptions c = copy();
    c.idleTimeoutSeconds = range("--timeout", s, 0, 365 * 86400);
    return c;
  }

  /** Seconds a partly received request may stall before its client is closed (0 = never). */
  int requestTimeoutSeconds() {
    return requestTimeoutSeconds;
  }

  ServerOptions withRequestTimeoutSeconds(int s) {
    ServerOptions c = copy();
    c.requestTimeoutSeconds = range("--request-timeout", s, 0, 365 * 86400);
    return c;
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
    String[] p = spec == null ? new String[0] : spec.split(":", 3);
    if (p.length != 3
        || p[0].isEmpty()
        || p[2].isEmpty()
        || !(p[1].equals("rw") || p[1].equals("ro"))) {
      throw new IllegalArgumentException(
          "--user wants NAME:rw:PASSWORD or NAME:ro:PASSWORD, got '" + spec + "'");
    }
    if (p[0].equals("default")) {
      throw new IllegalArgumentException("--user default: use --requirepass for the default user");
    }
    for (User u : users) {
      if (u.name().equals(p[0])) {
        throw new IllegalArgumentException("--user " + p[0] + " is given twice");
      }
    }
    for (int i = 0; i < p[0].length(); i++) {
      char ch = p[0].charAt(i);
      if (ch <= ' ' || ch > '~') {
        throw new IllegalArgumentException("--user name must be printable ASCII: " + p[0]);
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

  /** Seconds between attempts to reopen a store that failed its writes (0 = never). */
  int reopenIntervalSeconds() {
    return reopenIntervalSeconds;
  }

  ServerOptions withReopenIntervalSeconds(int s) {
    ServerOptions c = copy();
    c.reopenIntervalSeconds = range("--reopen-interval", s, 0, 86400);
    return c;
  }
}
