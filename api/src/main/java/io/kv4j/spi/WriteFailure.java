package io.kv4j.spi;

import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.StoreStats.Health;
import java.util.Map;
import java.util.TreeMap;

/**
 * The failed state of one store, shared by its keyspace handles (see {@link
 * AbstractStore#failWrites(String, Throwable)}): empty while the store accepts writes, then the
 * first environmental failure of a write path, kept until the store is reopened. Only the first
 * failure is kept, so the cause a caller sees is the one that put the store into this state, not a
 * later error it led to. Beside it, the background tasks that fail and retry (the store is {@link
 * Health#DEGRADED} while there is one).
 */
final class WriteFailure {
  private final StoreInfo store; // names the store in the message, also for a handle's failure
  private volatile StoreIOException first;
  private final Map<String, String> failingTasks = new TreeMap<>(); // guarded by this

  WriteFailure(StoreInfo store) {
    this.store = store;
  }

  /**
   * Puts the store into its failed state unless it already is.
   *
   * @return the exception to throw: the first failure itself when this call was the first, else a
   *     new one with its message and the first failure as its cause
   */
  StoreIOException fail(String what, Throwable cause) {
    synchronized (this) {
      if (first == null) {
        first =
            new StoreIOException(
                store.describe()
                    + " failed until reopened: "
                    + what
                    + (cause == null || cause.getMessage() == null
                        ? ""
                        : ": " + cause.getMessage()),
                cause);
        return first;
      }
    }
    return new StoreIOException(first.getMessage(), first);
  }

  /**
   * Throws if the store is in its failed state: one volatile read while it is not.
   *
   * @throws StoreIOException with the first failure's message and the first failure as its cause
   */
  void check() {
    StoreIOException f = first;
    if (f != null) {
      throw new StoreIOException(f.getMessage(), f);
    }
  }

  /** The first failure, or null while the store accepts writes. */
  StoreIOException first() {
    return first;
  }

  synchronized void taskFailing(String task, String problem) {
    failingTasks.put(task, problem);
  }

  synchronized void taskRecovered(String task) {
    failingTasks.remove(task);
  }

  /** {@code s} with this store's health and problem, read at one moment. */
  synchronized StoreStats withHealth(StoreStats s) {
    Health health =
        first != null ? Health.FAILED : failingTasks.isEmpty() ? Health.OK : Health.DEGRADED;
    return new StoreStats(
        s.keyCount(), s.keyCountExact(), s.diskBytes(), s.figures(), health, problem());
  }

  /** What is wrong, or null when nothing is. */
  synchronized String problem() {
    if (first != null) {
      return first.getMessage();
    }
    if (failingTasks.isEmpty()) {
      return null;
    }
    StringBuilder b = new StringBuilder(store.describe()).append(": ");
    String sep = "";
    for (Map.Entry<String, String> e : failingTasks.entrySet()) {
      b.append(sep).append(e.getKey()).append(" fails and is retried: ").append(e.getValue());
      sep = "; ";
    }
    return b.toString();
  }
}
