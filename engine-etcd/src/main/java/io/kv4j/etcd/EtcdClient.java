package io.kv4j.etcd;

import io.kv4j.StoreIOException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Requests to etcd's v3 JSON gateway ({@code POST /v3/...}) over {@code java.net.http}: one member
 * at a time, moving to the next on a connection failure or an "unavailable" answer (no leader,
 * leader changed, request timed out), retrying until {@code retry-timeout}; authenticates with user
 * and password and renews the token when etcd refuses it (expired, another member's, or older than
 * a change of users or roles). A TLS failure is not retried: {@link Tls} says which option to fix.
 */
final class EtcdClient {
  private static final String AUTHENTICATE = "/v3/auth/authenticate";

  /** Renewals of the token one request may trigger before its refusal is final. */
  private static final int MAX_RENEWALS = 3;

  /** Whether a request may be sent again after an attempt whose outcome is unknown. */
  enum Retry {
    /** The request is idempotent: retry on any transient failure. */
    ALWAYS,
    /** Retry only when the request surely never reached a member (connection refused). */
    UNSENT
  }

  /**
   * The HTTP clients in use, one per TLS and connect settings: stores with the same settings share
   * its connections and selector thread; the last store to close drops it.
   */
  private static final Map<String, Shared> CLIENTS = new HashMap<>();

  /** An HTTP client, its TLS settings, and how many open clients use it. */
  private static final class Shared {
    final HttpClient http;
    final Tls tls;
    int users;

    Shared(HttpClient http, Tls tls) {
      this.http = http;
      this.tls = tls;
    }
  }

  private final EtcdSettings settings;
  private final String who;
  private final String key;
  private final Tls tls;
  private final AtomicInteger current = new AtomicInteger();
  private final AtomicLong retries = new AtomicLong();
  private final AtomicLong authentications = new AtomicLong();
  private final Object renewing = new Object();
  private volatile HttpClient http; // null once closed
  private volatile String token;

  EtcdClient(EtcdSettings settings, String who) {
    this.settings = settings;
    this.who = who;
    this.key =
        settings.connectTimeoutMillis()
            + "|"
            + settings.caFile()
            + "|"
            + settings.keyStore()
            + "|"
            + settings.keyStorePassword();
    Shared shared;
    synchronized (CLIENTS) {
      shared = CLIENTS.get(key);
      if (shared == null) {
        Tls t = new Tls(settings, who);
        shared =
            new Shared(
                HttpClient.newBuilder()
                    .version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofMillis(settings.connectTimeoutMillis()))
                    .sslContext(t.context())
                    .build(),
                t);
        CLIENTS.put(key, shared);
      }
      shared.users++;
    }
    this.http = shared.http;
    this.tls = shared.tls;
  }

  /**
   * Gives up this client's share of the HTTP client; the last one to go drops it, so its selector
   * thread ends and its pooled connections close (at once on Java 21 and later, which have {@code
   * HttpClient.shutdown()}; on 17 once the client is garbage collected). Idempotent.
   */
  void close() {
    HttpClient h = http;
    if (h == null) {
      return;
    }
    http = null;
    boolean last;
    synchronized (CLIENTS) {
      Shared shared = CLIENTS.get(key);
      last = shared != null && shared.http == h && --shared.users == 0;
      if (last) {
        CLIENTS.remove(key);
      }
    }
    if (last) {
      shutdown(h);
    }
  }

  private static void shutdown(HttpClient h) {
    try {
      // Java 21+: closes idle connections and ends the selector once in-flight requests finish.
      HttpClient.class.getMethod("shutdown").invoke(h);
    } catch (NoSuchMethodException e) {
      // Java 17-20: the selector thread ends, closing the connections, once h is unreachable.
    } catch (ReflectiveOperationException | RuntimeException e) {
      // Best effort: as above, garbage collection ends it.
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
    // The request carries no token (see call), so a stale one stays in place for concurrent
    // requests until the new one replaces it: they renew it themselves if it has expired.
    Object t = call("authenticate", AUTHENTICATE, b.toString(), Retry.ALWAYS).get("token");
    if (t == null) {
      throw new StoreIOException(
          who + ": etcd answered no token to authenticate", (Throwable) null);
    }
    token = t.toString();
    authentications.incrementAndGet();
  }

  /**
   * Authenticates again unless another thread already replaced {@code stale}: one renewal for all
   * the requests an expired token failed at once.
   */
  private void renew(String stale) {
    synchronized (renewing) {
      if (Objects.equals(token, stale)) {
        authenticate();
      }
    }
  }

  /** Tokens obtained so far (the first, and each renewal). */
  long authentications() {
    return authentications.get();
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
    boolean authenticating = AUTHENTICATE.equals(path);
    String last = "none";
    Set<URI> tlsFailed = new HashSet<>();
    int renewals = 0;
    for (int attempt = 0; ; attempt++) {
      HttpClient h = http;
      if (h == null) {
        throw new IllegalStateException(who + ": " + op + " after the store was closed");
      }
      int at = Math.floorMod(current.get(), endpoints.size());
      URI endpoint = endpoints.get(at);
      boolean unsent = false;
      try {
        HttpRequest.Builder rb =
            HttpRequest.newBuilder(URI.create(endpoint + path))
                .timeout(Duration.ofMillis(settings.timeoutMillis()))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.US_ASCII));
        String t = authenticating ? null : token;
        if (t != null) {
          rb.header("Authorization", t);
        }
        HttpResponse<String> r =
            h.send(rb.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        if (r.statusCode() == 200) {
          return Json.object(Json.parse(r.body()));
        }
        Map<String, Object> err = Json.object(parseQuietly(r.body()));
        long code = err.containsKey("code") ? Json.number(err, "code") : -1;
        String msg = String.valueOf(err.getOrDefault("message", r.body()));
        last = endpoint + " answered HTTP " + r.statusCode() + " (code " + code + "): " + msg;
        if (t != null && renewals < MAX_RENEWALS && tokenRefused(code, msg)) {
          // Refused before anything was applied: renew the token and send the request again.
          renewals++;
          renew(t);
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
        String why = tls.explain(e, endpoint);
        if (why != null) {
          // A certificate problem does not heal by waiting: try each member once, then give up.
          tlsFailed.add(endpoint);
          if (tlsFailed.size() == endpoints.size()) {
            throw new StoreIOException(who + ": " + op + " failed: " + why, e);
          }
          last = why;
          unsent = true; // the member refused the connection before reading the request
        } else {
          last = endpoint + ": " + e;
        }
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

  /**
   * Whether etcd refused the request's token rather than the request: expired or unknown (code 16;
   * simple tokens are per member and die with a restart), or issued before an operator changed
   * users or roles ("revision of auth store is old"). Either is answered before anything is
   * applied.
   */
  private static boolean tokenRefused(long code, String msg) {
    return code == 16 || msg.contains("revision of auth store is old");
  }

  private String hint(long code, String msg) {
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
    String user = settings.user();
    if (msg.contains("CommonName of client")) {
      return " (with auth and client certificates both required, etcd's JSON gateway refuses a"
          + " client certificate that has a CommonName, the identity it cannot pass on: issue the"
          + " certificate of option 'key-store' without a CN; the user is the one of options"
          + " 'user' and 'password')";
    }
    if (msg.contains("authentication failed")) {
      return " (etcd refused user '"
          + user
          + "' with the password given: check options 'user' and 'password')";
    }
    if (msg.contains("user name is empty")) {
      return user.isEmpty()
          ? " (the cluster has auth enabled: set options 'user' and 'password')"
          : " (the request reached etcd without a token: check options 'user' and 'password')";
    }
    if (code == 7 || msg.contains("permission denied")) {
      return user.isEmpty()
          ? " (no user is configured: set options 'user' and 'password')"
          : " (user '"
              + user
              + "' has no role granting read and write on the store's key prefix '"
              + settings.prefix()
              + "': grant one the range from the prefix to its end, or check options 'user',"
              + " 'password' and 'prefix')";
    }
    if (code == 16) {
      return " (etcd keeps refusing the tokens it issues to user '"
          + user
          + "': check options 'user' and 'password')";
    }
    return "";
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
