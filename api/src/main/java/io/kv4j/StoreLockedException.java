package io.kv4j;

import java.nio.file.Path;

/** The location is already open, in this process or another one. Close the other store first. */
public final class StoreLockedException extends StoreException {
  private static final long serialVersionUID = 1L;

  private final transient Path directory;

  /**
   * Creates an exception.
   *
   * @param message who holds the lock, naming the directory
   * @param directory the locked directory
   */
  public StoreLockedException(String message, Path directory) {
    super(message);
    this.directory = directory;
  }

  /**
   * The directory that is locked.
   *
   * @return the directory
   */
  public Path directory() {
    return directory;
  }
}
