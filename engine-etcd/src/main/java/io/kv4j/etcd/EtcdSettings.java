package io.kv4j.etcd;

import io.kv4j.StoreConfig;
import io.kv4j.spi.OptionSpec;
import io.kv4j.spi.ServerNames;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Connection, limit and namespace settings read from a store config. */
record EtcdSettings(
    List<URI> endpoints,
    String user,
    String password,
    String caFile,
    String keyStore,
    String keyStorePassword,
    String prefix,
    int connectTimeoutMillis,
    int timeoutMillis,
    int retryTimeoutMillis,
    int fetchSize,
    int lockTtlSeconds,
    int lockWaitMillis,
    int maxTxnOps,
    int maxRequestBytes) {

  static final OptionSpec<String> ENDPOINTS =
      OptionSpec.text(
          "endpoints",
          "http://127.0.0.1:2379",
          "comma-separated client URLs (http:// or https://) of the cluster's members; any subset"
              + " works, the engine moves to the next one when a member does not answer");
  static final OptionSpec<String> USER =
      OptionSpec.text("user", "", "etcd user (auth enabled); empty sends no credentials");
  static final OptionSpec<String> PASSWORD = OptionSpec.text("password", "", "the user's password");
  static final OptionSpec<String> CA_FILE =
      OptionSpec.text(
          "ca-file",
          "",
          "PEM file of the CA certificates trusted for https endpoints; empty uses the JVM's");
  static final OptionSpec<String> KEY_STORE =
      OptionSpec.text(
          "key-store",
          "",
          "PKCS#12 file with the client certificate and key, for clusters that require client"
              + " certificates; empty sends none");
  static final OptionSpec<String> KEY_STORE_PASSWORD =
      OptionSpec.text("key-store-password", "", "password of key-store");
  static final OptionSpec<String> PREFIX =
      OptionSpec.text(
          "prefix",
          "",
          "key prefix of the store on the cluster; empty derives kv4j/<name>/<hash>/ from the"
              + " store path");
  static final OptionSpec<Integer> CONNECT_TIMEOUT =
      OptionSpec.integer("connect-timeout", 3000, 100, 600_000, "ms", "TCP connect timeout");
  static final OptionSpec<Integer> TIMEOUT =
      OptionSpec.integer(
          "timeout",
          10_000,
          100,
          3_600_000,
          "ms",
          "how long one request waits for its answer before trying the next member");
  static final OptionSpec<Integer> RETRY_TIMEOUT =
      OptionSpec.integer(
          "retry-timeout",
          15_000,
          0,
          3_600_000,
          "ms",
          "how long an operation keeps retrying on other members (leader election, a member"
              + " down) before it fails with StoreIOException");
  static final OptionSpec<Integer> FETCH_SIZE =
      OptionSpec.integer(
          "fetch-size", 500, 1, 10_000, "entries", "entries a cursor reads per range request");
  static final OptionSpec<Integer> LOCK_TTL =
      OptionSpec.integer(
          "lock-ttl",
          5,
          2,
          3600,
          "s",
          "TTL of the lease holding the store's lock key, kept alive every third of it while"
              + " open; a crashed client's lock goes after this");
  static final OptionSpec<Integer> LOCK_WAIT =
      OptionSpec.integer(
          "lock-wait",
          7000,
          0,
          600_000,
          "ms",
          "how long open waits for a held lock to go before StoreLockedException");

  /** Below etcd 3.4's WAL entry limit (10 MiB) with room for the entry's own framing. */
  static final int MAX_SAFE_REQUEST = 10_000_000;

  static final OptionSpec<Integer> MAX_TXN_OPS =
      OptionSpec.integer(
          "max-txn-ops",
          128,
          1,
          1_000_000,
          "operations",
          "the cluster's --max-txn-ops: a batch (one txn) takes one per distinct key it writes (two"
              + " once the store has held a value too large for one request), and three per value it"
              + " chunks; larger batches are refused with IllegalArgumentException");
  static final OptionSpec<Integer> MAX_REQUEST_BYTES =
      OptionSpec.integer(
          "max-request-bytes",
          1_572_864,
          256 << 10,
          MAX_SAFE_REQUEST,
          "bytes",
          "the cluster's --max-request-bytes: the largest request the engine sends. A value over"
              + " about half of it, or a batch over it, is written in chunks by several requests"
              + " before one txn publishes it. At most 10,000,000: etcd 3.4 cannot read back a WAL"
              + " entry over 10 MiB, so a member that logged a larger request never restarts");

  static final List<OptionSpec<?>> OPTIONS =
      List.of(
          ENDPOINTS,
          USER,
          PASSWORD,
          CA_FILE,
          KEY_STORE,
          KEY_STORE_PASSWORD,
          PREFIX,
          CONNECT_TIMEOUT,
          TIMEOUT,
          RETRY_TIMEOUT,
          FETCH_SIZE,
          LOCK_TTL,
          LOCK_WAIT,
          MAX_TXN_OPS,
          MAX_REQUEST_BYTES);

  static EtcdSettings of(StoreConfig c) {
    List<URI> endpoints = new ArrayList<>();
    for (String e : c.get(ENDPOINTS).split(",")) {
      String t = e.trim();
      if (t.isEmpty()) {
        continue;
      }
      URI u;
      try {
        u = URI.create(t.endsWith("/") ? t.substring(0, t.length() - 1) : t);
      } catch (IllegalArgumentException ex) {
        throw new IllegalArgumentException(
            "option 'endpoints' has invalid entry '" + t + "': expected http(s)://host:port", ex);
      }
      if (!("http".equals(u.getScheme()) || "https".equals(u.getScheme())) || u.getHost() == null) {
        throw new IllegalArgumentException(
            "option 'endpoints' has invalid entry '" + t + "': expected http(s)://host:port");
      }
      endpoints.add(u);
    }
    if (endpoints.isEmpty()) {
      throw new IllegalArgumentException("option 'endpoints' names no member URL");
    }
    if (c.get(USER).isEmpty() != c.get(PASSWORD).isEmpty()) {
      throw new IllegalArgumentException("options 'user' and 'password' go together");
    }
    String prefix = c.get(PREFIX);
    if (prefix.isEmpty()) {
      prefix = prefixFor(c.path());
    } else if (!prefix.endsWith("/")) {
      prefix = prefix + "/"; // keeps one store's prefix from being another's (a/b vs a/bc)
    }
    return new EtcdSettings(
        List.copyOf(endpoints),
        c.get(USER),
        c.get(PASSWORD),
        c.get(CA_FILE),
        c.get(KEY_STORE),
        c.get(KEY_STORE_PASSWORD),
        prefix,
        c.get(CONNECT_TIMEOUT),
        c.get(TIMEOUT),
        c.get(RETRY_TIMEOUT),
        c.get(FETCH_SIZE),
        c.get(LOCK_TTL),
        c.get(LOCK_WAIT),
        c.get(MAX_TXN_OPS),
        c.get(MAX_REQUEST_BYTES));
  }

  /** The settings with the passwords left out: a record's own toString would print them. */
  @Override
  public String toString() {
    return "EtcdSettings[endpoints="
        + address()
        + ", user="
        + user
        + ", password="
        + (password.isEmpty() ? "" : "(hidden)")
        + ", caFile="
        + caFile
        + ", keyStore="
        + keyStore
        + ", keyStorePassword="
        + (keyStorePassword.isEmpty() ? "" : "(hidden)")
        + ", prefix="
        + prefix
        + ", connectTimeoutMillis="
        + connectTimeoutMillis
        + ", timeoutMillis="
        + timeoutMillis
        + ", retryTimeoutMillis="
        + retryTimeoutMillis
        + ", fetchSize="
        + fetchSize
        + ", lockTtlSeconds="
        + lockTtlSeconds
        + ", lockWaitMillis="
        + lockWaitMillis
        + ", maxTxnOps="
        + maxTxnOps
        + ", maxRequestBytes="
        + maxRequestBytes
        + "]";
  }

  /** The endpoints, for messages. */
  String address() {
    List<String> s = new ArrayList<>();
    for (URI u : endpoints) {
      s.add(u.toString());
    }
    return String.join(",", s);
  }

  /**
   * The prefix for a store path: {@code kv4j/<last path element>/<16 hex of SHA-256 of the absolute
   * path>/}, the element lower-cased, each run of characters other than {@code a-z 0-9 . _ -} made
   * one {@code _}, cut to 32 characters ({@link ServerNames#forPath}, the names the Redis engine
   * uses with {@code /} for {@code :}). Existing stores are found under it: it must never change.
   */
  static String prefixFor(Path path) {
    return ServerNames.forPath(path, '/', "._-", 32) + "/";
  }
}
