package io.kv4j.sqlite;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** The store directory's files: which are the engine's, their sizes, fsync. */
final class SqliteFiles {
  private SqliteFiles() {}

  /**
   * Whether a file name in the store directory is the engine's: the database and its side files.
   */
  static boolean ownsFile(String name) {
    return name.equals(SqliteStore.DB_FILE_NAME)
        || name.equals(SqliteStore.DB_FILE_NAME + "-wal")
        || name.equals(SqliteStore.DB_FILE_NAME + "-shm")
        || name.equals(SqliteStore.DB_FILE_NAME + "-journal");
  }

  /** A side file of the database: {@code -wal}, {@code -shm}, {@code -journal}. */
  static Path sideFile(Path file, String suffix) {
    return file.resolveSibling(file.getFileName() + suffix);
  }

  /** Forces a file to disk, if it exists. */
  static void fsync(Path p) throws IOException {
    if (Files.exists(p)) {
      try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
        ch.force(true);
      }
    }
  }

  /** A file's size, 0 if it is absent. */
  static long sizeOf(Path p) {
    try {
      return Files.size(p);
    } catch (IOException e) {
      return 0; // the WAL and shm files come and go
    }
  }
}
