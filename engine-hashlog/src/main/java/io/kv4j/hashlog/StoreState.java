package io.kv4j.hashlog;

import io.kv4j.StoreClosedException;
import io.kv4j.StoreIOException;
import java.lang.System.Logger.Level;

/**
 * The store's lifecycle as its parts see it: open or closed, and writable or failed until reopened
 * (the failure policy of {@link io.kv4j.spi.AbstractStore#failWrites}, which keeps the state; the
 * first failure is logged here). The parts get this instead of the store, so none of them reaches
 * into the store's other members.
 */
final class StoreState {
  private final HashLogStore store;

  StoreState(HashLogStore store) {
    this.store = store;
  }

  /** Whether the store's close began. */
  boolean closed() {
    return store.closed();
  }

  /** Whether the store is failed until reopened. */
  boolean failed() {
    return store.failure() != null;
  }

  /** Throws the failed state's exception if the store is failed. */
  void checkNotFailed() {
    StoreIOException f = store.failure();
    if (f != null) {
      throw new StoreIOException(f.getMessage(), f);
    }
  }

  /**
   * Puts the store into its failed state (writes and sync refused, "failed until reopened", reads
   * go on). Never retried.
   *
   * @return the exception to throw
   */
  StoreIOException fail(String what, Throwable cause) {
    boolean first = store.failure() == null;
    StoreIOException e = store.failWritesBecause(what, cause);
    if (first) {
      HashLogStore.LOG.log(Level.ERROR, "hashlog: " + e.getMessage(), cause);
    }
    return e;
  }

  /**
   * Starts one of the store's background threads: if it ends by throwing anything, the store is
   * failed until reopened, naming the thread (see {@link io.kv4j.spi.AbstractStore}).
   */
  Thread startThread(String name, Runnable body) {
    return store.startEngineThread(name, body);
  }

  /**
   * A job of a shared background thread threw {@code cause} on {@code thread}: the job is over, and
   * this store is failed until reopened, naming the thread, as if a thread of its own had died.
   */
  void died(String thread, Throwable cause) {
    store.backgroundDied(thread, cause);
  }

  /** The background task failed and will be retried: the store is degraded until it recovers. */
  void taskFailing(String task, Throwable cause) {
    store.taskFailing(task, cause);
  }

  /** The background task works again. */
  void taskRecovered(String task) {
    store.taskRecovered(task);
  }

  StoreClosedException closedError() {
    return new StoreClosedException(describe() + " is closed");
  }

  /** The store's engine and location, for messages. */
  String describe() {
    return store.info().describe();
  }
}
