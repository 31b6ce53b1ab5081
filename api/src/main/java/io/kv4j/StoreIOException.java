package io.kv4j;

import java.io.IOException;

/** An I/O operation failed: disk full, permission denied, device error. */
public final class StoreIOException extends StoreException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates an exception.
   *
   * @param message what failed, naming the engine and the file
   * @param cause the underlying error
   */
  public StoreIOException(String message, IOException cause) {
    super(message, cause);
  }

  /**
   * Creates an exception for a failure reported by native code.
   *
   * @param message what failed, naming the engine and the file
   * @param cause the underlying error
   */
  public StoreIOException(String message, Throwable cause) {
    super(message, cause);
  }
}
