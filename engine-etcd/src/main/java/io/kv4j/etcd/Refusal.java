package io.kv4j.etcd;

import java.util.Map;

/**
 * An answer of etcd's JSON gateway other than HTTP 200: its status, and the gRPC code and message
 * of its error body; says whether another member (or the same one later) may serve the request,
 * whether etcd refused the token rather than the request, and which option to fix when it is final.
 *
 * @param status the HTTP status
 * @param code the gRPC code of the error body, -1 when it has none
 * @param message the error body's message, or the whole body when it has none
 */
record Refusal(int status, long code, String message) {

  /**
   * Reads a refusal from its answer.
   *
   * @throws IllegalArgumentException if the error body's code is not a number
   */
  static Refusal of(int status, String body) {
    Map<String, Object> err = Json.object(parseQuietly(body));
    long code = err.containsKey("code") ? Json.number(err, "code") : -1;
    return new Refusal(status, code, String.valueOf(err.getOrDefault("message", body)));
  }

  private static Object parseQuietly(String body) {
    try {
      return Json.parse(body);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /** Whether another member, or the same one later, may serve the request. */
  boolean isTransient() {
    return status == 503
        || code == 14 // Unavailable: no leader, leader changed, request timed out, not capable
        || code == 4 // DeadlineExceeded
        || message.contains("leader changed")
        || message.contains("no leader")
        || message.contains("timed out")
        || message.contains("deadline exceeded") // the gateway's own deadline (HTTP 500, code 2)
        || message.contains("too many requests");
  }

  /** Whether the request surely was not applied: "no leader" never reached the Raft log. */
  boolean unapplied() {
    return message.contains("no leader");
  }

  /**
   * Whether etcd refused the request's token rather than the request: expired or unknown (code 16;
   * simple tokens are per member and die with a restart), or issued before an operator changed
   * users or roles ("revision of auth store is old"). Either is answered before anything is
   * applied.
   */
  boolean tokenRefused() {
    return code == 16 || message.contains("revision of auth store is old");
  }

  /** The status, code and message, as a failure message shows them. */
  @Override
  public String toString() {
    return "HTTP " + status + " (code " + code + "): " + message;
  }

  /**
   * What to do about a final refusal, in parentheses after a leading space; empty when etcd's
   * message says it all.
   *
   * @param settings the store's settings, naming the user and prefix the hint mentions
   */
  String hint(EtcdSettings settings) {
    String msg = message;
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
}
