package io.kv4j.spi;

import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;

/**
 * The failed state of one store, shared by its keyspace handles (see {@link
 * AbstractStore#failWrites(String, Throwable)}): empty while the store accepts writes, then the
 * first environmental failure of a write path, kept until the store is reopened. Only the first
 * failure is kept, so the cause a caller sees is the one that put the store into this state, not a
 * later error it led to.
 */
final class WriteFailure {
  private final StoreInfo store; // names the store in the message, also for a handle's failure
  private volatile StoreIOException first;

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
}
