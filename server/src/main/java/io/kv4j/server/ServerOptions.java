package io.kv4j.server;

/**
 * Listening address and request limits.
 *
 * @param bind address to bind
 * @param port TCP port (0 picks a free one)
 * @param threads event-loop threads (0 = available processors)
 * @param maxRequestBytes limit on the sum of the bulk lengths of one request
 * @param maxBulkBytes limit on one bulk string (Redis: proto-max-bulk-len, 512 MiB)
 * @param maxArgs limit on the number of arguments of one request (Redis: 1024 * 1024)
 * @param maxInlineBytes limit on an inline (telnet-style) request line (Redis: 64 KiB)
 * @param nativeTransport use epoll when available
 */
record ServerOptions(
    String bind,
    int port,
    int threads,
    long maxRequestBytes,
    long maxBulkBytes,
    int maxArgs,
    int maxInlineBytes,
    boolean nativeTransport) {

  static final long MIB = 1024L * 1024;

  static ServerOptions defaults() {
    return new ServerOptions(
        "127.0.0.1", 6380, 0, 512 * MIB, 512 * MIB, 1024 * 1024, 64 * 1024, true);
  }

  ServerOptions withPort(int p) {
    return new ServerOptions(
        bind, p, threads, maxRequestBytes, maxBulkBytes, maxArgs, maxInlineBytes, nativeTransport);
  }

  ServerOptions withBind(String b) {
    return new ServerOptions(
        b, port, threads, maxRequestBytes, maxBulkBytes, maxArgs, maxInlineBytes, nativeTransport);
  }

  ServerOptions withThreads(int t) {
    return new ServerOptions(
        bind, port, t, maxRequestBytes, maxBulkBytes, maxArgs, maxInlineBytes, nativeTransport);
  }

  ServerOptions withMaxRequestBytes(long m) {
    return new ServerOptions(
        bind,
        port,
        threads,
        m,
        Math.min(maxBulkBytes, m),
        maxArgs,
        maxInlineBytes,
        nativeTransport);
  }

  ServerOptions withNativeTransport(boolean n) {
    return new ServerOptions(
        bind, port, threads, maxRequestBytes, maxBulkBytes, maxArgs, maxInlineBytes, n);
  }
}
