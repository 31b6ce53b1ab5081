package io.kv4j.etcd;

import io.kv4j.StoreClosedException;
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
    Set<URI> tlsFailed = new HashSet<>();
    int renewals = 0;
    for (int attempt = 0; ; attempt++) {
      HttpClient h = http;
      if (h == null) {
        // A call that raced close(): it fails as closed, as every call after close() does.
        throw new StoreClosedException(who + ": " + op + " after the store was closed");
      }
      int at = Math.floorMod(current.get(), endpoints.size());
      URI endpoint = endpoints.get(at);
      Miss miss;
      try {
        String t = authenticating ? null : token;
        HttpResponse<String> r =
            h.send(
                request(endpoint, path, body, t),
                HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        if (r.statusCode() == 200) {
          return Json.object(Json.parse(r.body()));
        }
        Refusal no = Refusal.of(r.statusCode(), r.body());
        if (t != null && renewals < MAX_RENEWALS && no.tokenRefused()) {
          // Refused before anything was applied: renew the token and send the request again.
          renewals++;
          renew(t);
          continue;
        }
        miss = refused(op, endpoint, no);
      } catch (ConnectException | HttpConnectTimeoutException e) {
        miss = new Miss(endpoint + ": cannot connect (" + e + ")", true);
      } catch (IOException e) {
        miss = broken(op, endpoint, e, tlsFailed, endpoints.size());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new StoreIOException(who + ": " + op + " interrupted", e);
      } catch (IllegalArgumentException e) {
        throw new StoreIOException(who + ": " + op + ": " + e.getMessage(), e);
      }
      if (retry == Retry.UNSENT && !miss.unsent()) {
        throw outcomeUnknown(op, miss.why());
      }
      current.compareAndSet(at, at + 1);
      if (System.nanoTime() - deadline > 0) {
        throw noMemberInTime(op, miss.why());
      }
      retries.incrementAndGet();
      pause(Math.min(500, 20L << Math.min(attempt, 5)));
    }
  }

  /**
   * A failed attempt that another one may overcome.
   *
   * @param why what went wrong, for the message of the final failure
   * @param unsent whether the request surely never reached a member, so that even a request that is
   *     not idempotent may go again
   */
  private record Miss(String why, boolean unsent) {}

  private HttpRequest request(URI endpoint, String path, String body, String token) {
    HttpRequest.Builder rb =
        HttpRequest.newBuilder(URI.create(endpoint + path))
            .timeout(Duration.ofMillis(settings.timeoutMillis()))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.US_ASCII));
    if (token != null) {
      rb.header("Authorization", token);
    }
    return rb.build();
  }

  /** A refusal another attempt may overcome; throws one that is final. */
  private Miss refused(String op, URI endpoint, Refusal no) {
    String why = endpoint + " answered " + no;
    if (!no.isTransient()) {
      throw new StoreIOException(
          who + ": " + op + " failed: " + why + no.hint(settings), (Throwable) null);
    }
    // "no leader" never reached the log: nothing was applied, any request may go again.
    return new Miss(why, no.unapplied());
  }

  /** A request that failed in transport; throws once TLS failed at every member. */
  private Miss broken(String op, URI endpoint, IOException e, Set<URI> tlsFailed, int members) {
    String why = tls.explain(e, endpoint);
    if (why == null) {
      return new Miss(endpoint + ": " + e, false);
    }
    // A certificate problem does not heal by waiting: try each member once, then give up.
    tlsFailed.add(endpoint);
    if (tlsFailed.size() == members) {
      throw new StoreIOException(who + ": " + op + " failed: " + why, e);
    }
    return new Miss(why, true); // the member refused the connection before reading the request
  }

  private StoreIOException outcomeUnknown(String op, String why) {
    return new StoreIOException(
        who
            + ": "
            + op
            + " failed with its outcome unknown (it may or may not have been applied; read the"
            + " key to find out): "
            + why,
        (Throwable) null);
  }

  private StoreIOException noMemberInTime(String op, String why) {
    return new StoreIOException(
        who
            + ": "
            + op
            + " failed: no member of "
            + settings.address()
            + " could serve it within retry-timeout="
            + settings.retryTimeoutMillis()
            + "ms (has the cluster lost its quorum, a majority of its members?); last"
            + " error: "
            + why,
        (Throwable) null);
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
