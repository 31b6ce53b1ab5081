package io.kv4j;

/**
 * An environmental failure of a store: I/O, corruption, locking, closed. Unchecked; the subclasses
 * are the cases a caller acts on. Native engine errors are kept as the cause.
 */
public class StoreException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates an exception.
   *
   * @param message what failed, naming the engine and the path
   */
  public StoreException(String message) {
    super(message);
  }

  /**
   * Creates an exception with a cause.
   *
   * @param message what failed, naming the engine and the path
   * @param cause the underlying error
   */
  public StoreException(String message, Throwable cause) {
    super(message, cause);
  }
}
