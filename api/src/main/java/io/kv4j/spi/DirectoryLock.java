package io.kv4j.spi;

import io.kv4j.StoreIOException;
import io.kv4j.StoreLockedException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Exclusive ownership of a store directory, against this process and others. Held through an OS
 * file lock on {@value #FILE_NAME} in the directory, which the OS releases when the process dies,
 * so a crashed process never leaves a stale lock; and through a JVM-wide set, because a second
 * {@link FileChannel#tryLock()} in the same JVM does not fail cleanly.
 */
public final class DirectoryLock implements AutoCloseable {
  /** The name of the lock file inside a store directory. */
  public static final String FILE_NAME = "kv4j.lock";

  private static final Set<Path> HELD = ConcurrentHashMap.newKeySet();

  private final Path directory;
  private final FileChannel channel;
  private final FileLock lock;
  private boolean released;

  private DirectoryLock(Path directory, FileChannel channel, FileLock lock) {
    this.directory = directory;
    this.channel = channel;
    this.lock = lock;
  }

  /**
   * Locks a directory that exists.
   *
   * @param directory the store directory
   * @param engine the engine id, for messages
   * @return the held lock; close it exactly when the store closes
   * @throws StoreLockedException if the directory is locked in this or another process
   * @throws StoreIOException if the lock file cannot be created
   */
  public static DirectoryLock acquire(Path directory, String engine) {
    Path dir;
    try {
      dir = directory.toRealPath();
    } catch (IOException e) {
      throw new StoreIOException(
          "engine '" + engine + "': cannot resolve store directory " + directory, e);
    }
    if (!HELD.add(dir)) {
      throw new StoreLockedException(
          "engine '" + engine + "': directory " + dir + " is already open in this process", dir);
    }
    FileChannel ch = null;
    boolean ok = false;
    try {
      ch =
          FileChannel.open(
              dir.resolve(FILE_NAME), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      FileLock l = ch.tryLock();
      if (l == null) {
        throw new StoreLockedException(
            "engine '" + engine + "': directory " + dir + " is open in another process", dir);
      }
      ok = true;
      return new DirectoryLock(dir, ch, l);
    } catch (OverlappingFileLockException e) {
      throw new StoreLockedException(
          "engine '" + engine + "': directory " + dir + " is already open in this process", dir);
    } catch (IOException e) {
      throw new StoreIOException(
          "engine '" + engine + "': cannot lock directory " + dir + ": " + e.getMessage(), e);
    } finally {
      if (!ok) {
        HELD.remove(dir);
        closeQuietly(ch);
      }
    }
  }

  /**
   * The locked directory, resolved to its real path.
   *
   * @return the directory
   */
  public Path directory() {
    return directory;
  }

  /** Releases the lock. Idempotent. */
  @Override
  public synchronized void close() {
    if (released) {
      return;
    }
    released = true;
    try {
      lock.release();
    } catch (IOException ignored) {
      // Closing the channel below releases the lock as well.
    } finally {
      closeQuietly(channel);
      HELD.remove(directory);
    }
  }

  private static void closeQuietly(FileChannel ch) {
    if (ch != null) {
      try {
        ch.close();
      } catch (IOException ignored) {
        // Nothing to do: the lock dies with the descriptor.
      }
    }
  }
}
