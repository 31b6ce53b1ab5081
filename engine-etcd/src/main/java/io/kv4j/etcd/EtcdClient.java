package io.kv4j.etcd;

import io.kv4j.StoreIOException;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * Requests to etcd's v3 JSON gateway ({@code POST /v3/...}) over {@code java.net.http}: one member
 * at a time, moving to the next on a connection failure or an "unavailable" answer (no leader,
 * leader changed, request timed out), retrying until {@code retry-timeout}; authenticates with user
 * and password and renews the token when etcd says it expired.
 */
final class EtcdClient {
  /** Whether a request may be sent again after an attempt whose outcome is unknown. */
  enum Retry {
    /** The request is idempotent: retry on any transient failure. */
    ALWAYS,
    /** Retry only when the request surely never reached a member (connection refused). */
    UNSENT
  }

  /** One HTTP client per TLS and connect settings: stores share its connections and threads. */
  private static final Map<String, HttpClient> CLIENTS = new ConcurrentHashMap<>();

  private final EtcdSettings settings;
  private final String who;
  private final HttpClient http;
  private final AtomicInteger current = new AtomicInteger();
  private final AtomicLong retries = new AtomicLong();
  private volatile String token;

  EtcdClient(EtcdSettings settings, String who) {
    this.settings = settings;
    this.who = who;
    String key =
        settings.connectTimeoutMillis()
            + "|"
            + settings.caFile()
            + "|"
            + settings.keyStore()
            + "|"
            + settings.keyStorePassword();
    this.http = CLIENTS.computeIfAbsent(key, k -> newClient(settings, who));
  }

  private static HttpClient newClient(EtcdSettings s, String who) {
    HttpClient.Builder b =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofMillis(s.connectTimeoutMillis()));
    if (!s.caFile().isEmpty() || !s.keyStore().isEmpty()) {
      b.sslContext(sslContext(s, who));
    }
    return b.build();
  }

  private static SSLContext sslContext(EtcdSettings s, String who) {
    try {
      TrustManagerFactory tmf = null;
      if (!s.caFile().isEmpty()) {
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        try (InputStream in = Files.newInputStream(Path.of(s.caFile()))) {
          int n = 0;
          for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
            trust.setCertificateEntry("ca-" + n++, c);
          }
          if (n == 0) {
            throw new IllegalArgumentException(
                "option 'ca-file' names " + s.caFile() + ", which holds no PEM certificate");
          }
        }
        tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
      }
      KeyManagerFactory kmf = null;
      if (!s.keyStore().isEmpty()) {
        char[] pw = s.keyStorePassword().toCharArray();
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(Path.of(s.keyStore()))) {
          ks.load(in, pw);
        }
        kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, pw);
      }
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(
          kmf == null ? null : kmf.getKeyManagers(),
          tmf == null ? null : tmf.getTrustManagers(),
          null);
      return ctx;
    } catch (IOException | GeneralSecurityException e) {
      throw new StoreIOException(who + ": cannot set up TLS: " + e, e);
    }
  }

  /** Retries so far (member changes, elections). */
  long retries() {
    return retries.get();
  }

  /** Gets an auth token when a user is configured. */
  void authenticate() {
    if (settings.user().isEmpty()) {
      return;
    }
    StringBuilder b = new StringBuilder("{\"name\":");
    Json.quote(b, settings.user()).append(",\"password\":");
    Json.quote(b, settings.password()).append('}');
    token = null;
    Object t =
        call("authenticate", "/v3/auth/authenticate", b.toString(), Retry.ALWAYS).get("token");
    if (t == null) {
      throw new StoreIOException(
          who + ": etcd answered no token to authenticate", (Throwable) null);
    }
    token = t.toString();
  }

  /**
   * Sends one request, retrying as {@code retry} allows until retry-timeout.
   *
   * @return the answer's JSON object
   * @throws StoreIOException when no member answered in time, or etcd refused the request
   */
  Map<String, Object> call(String op, String path, String body, Retry retry) {
    long deadline =
        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(settings.retryTimeoutMillis());
    List<URI> endpoints = settings.endpoints();
    String last = "none";
    for (int attempt = 0; ; attempt++) {
      int at = Math.floorMod(current.get(), endpoints.size());
      URI endpoint = endpoints.get(at);
      boolean unsent = false;
      try {
        HttpRequest.Builder rb =
            HttpRequest.newBuilder(URI.create(endpoint + path))
                .timeout(Duration.ofMillis(settings.timeoutMillis()))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.US_ASCII));
        String t = token;
        if (t != null) {
          rb.header("Authorization", t);
        }
        HttpResponse<String> r =
            http.send(rb.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        if (r.statusCode() == 200) {
          return Json.object(Json.parse(r.body()));
        }
        Map<String, Object> err = Json.object(parseQuietly(r.body()));
        long code = err.containsKey("code") ? Json.number(err, "code") : -1;
        String msg = String.valueOf(err.getOrDefault("message", r.body()));
        last = endpoint + " answered HTTP " + r.statusCode() + " (code " + code + "): " + msg;
        if (code == 16 && t != null && !path.startsWith("/v3/auth/")) {
          authenticate(); // token expired or the member restarted (simple tokens are per member)
          continue;
        }
        if (!isTransient(r.statusCode(), code, msg)) {
          throw new StoreIOException(
              who + ": " + op + " failed: " + last + hint(code, msg), (Throwable) null);
        }
        // "no leader" never reached the log: nothing was applied, any request may go again.
        unsent = msg.contains("no leader");
      } catch (ConnectException | HttpConnectTimeoutException e) {
        last = endpoint + ": cannot connect (" + e + ")";
        unsent = true;
      } catch (IOException e) {
        last = endpoint + ": " + e;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new StoreIOException(who + ": " + op + " interrupted", e);
      } catch (IllegalArgumentException e) {
        throw new StoreIOException(who + ": " + op + ": " + e.getMessage(), e);
      }
      if (retry == Retry.UNSENT && !unsent) {
        throw new StoreIOException(
            who
                + ": "
                + op
                + " failed with its outcome unknown (it may or may not have been applied; read the"
                + " key to find out): "
                + last,
            (Throwable) null);
      }
      current.compareAndSet(at, at + 1);
      if (System.nanoTime() - deadline > 0) {
        throw new StoreIOException(
            who
                + ": "
                + op
                + " failed: no member of "
                + settings.address()
                + " could serve it within retry-timeout="
                + settings.retryTimeoutMillis()
                + "ms (has the cluster lost its quorum, a majority of its members?); last"
                + " error: "
                + last,
            (Throwable) null);
      }
      retries.incrementAndGet();
      pause(Math.min(500, 20L << Math.min(attempt, 5)));
    }
  }

  private static Object parseQuietly(String body) {
    try {
      return Json.parse(body);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /** Whether another member, or the same one later, may serve the request. */
  private static boolean isTransient(int status, long code, String msg) {
    return status == 503
        || code == 14 // Unavailable: no leader, leader changed, request timed out, not capable
        || code == 4 // DeadlineExceeded
        || msg.contains("leader changed")
        || msg.contains("no leader")
        || msg.contains("timed out")
        || msg.contains("deadline exceeded") // the gateway's own deadline (HTTP 500, code 2)
        || msg.contains("too many requests");
  }

  private static String hint(long code, String msg) {
    if (msg.contains("database space exceeded")) {
      return " (the cluster reached its backend quota, --quota-backend-bytes, 2 GiB by default:"
          + " compact and defragment it, or raise the quota, then disarm the NOSPACE alarm)";
    }
    if (msg.contains("too many operations")) {
      return " (the cluster's --max-txn-ops is below this engine's option max-txn-ops)";
    }
    if (msg.contains("too large")) {
      return " (the cluster's --max-request-bytes is below this engine's option"
          + " max-request-bytes)";
    }
    if (msg.contains("compacted")) {
      return " (the revision was compacted away: the cluster keeps no history that old)";
    }
    return code == 7 || code == 16 ? " (check options 'user' and 'password')" : "";
  }

  static void pause(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreIOException("interrupted while waiting to retry", e);
    }
  }
}
