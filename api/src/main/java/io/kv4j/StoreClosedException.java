package io.kv4j;

/** The store (or the store behind a cursor) was closed; reopen it to continue. */
public final class StoreClosedException extends StoreException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates an exception.
   *
   * @param message which store was closed
   */
  public StoreClosedException(String message) {
    super(message);
  }
}
