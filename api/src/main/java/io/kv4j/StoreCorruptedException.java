package io.kv4j;

import java.nio.file.Path;

/**
 * Stored data failed a check (checksum, magic number, structure) or the location holds something
 * that is not this engine's data. Corrupt data is reported, never returned and never silently
 * discarded.
 */
public final class StoreCorruptedException extends StoreException {
  private static final long serialVersionUID = 1L;

  private final transient Path file;
  private final long offset;

  /**
   * Creates an exception.
   *
   * @param message what is wrong
   * @param file the damaged file, or null if unknown
   * @param offset the byte offset of the damage in the file, or -1 if unknown
   */
  public StoreCorruptedException(String message, Path file, long offset) {
    super(message);
    this.file = file;
    this.offset = offset;
  }

  /**
   * Creates an exception with a cause.
   *
   * @param message what is wrong
   * @param file the damaged file, or null if unknown
   * @param offset the byte offset of the damage, or -1 if unknown
   * @param cause the underlying error
   */
  public StoreCorruptedException(String message, Path file, long offset, Throwable cause) {
    super(message, cause);
    this.file = file;
    this.offset = offset;
  }

  /**
   * The damaged file.
   *
   * @return the file, or null if unknown
   */
  public Path file() {
    return file;
  }

  /**
   * Where in {@link #file()} the damage is.
   *
   * @return the byte offset, or -1 if unknown
   */
  public long offset() {
    return offset;
  }
}
