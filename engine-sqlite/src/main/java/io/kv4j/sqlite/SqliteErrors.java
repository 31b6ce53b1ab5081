package io.kv4j.sqlite;

import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreException;
import io.kv4j.StoreIOException;
import java.nio.file.Path;
import java.sql.SQLException;

/** How SQLite's error codes map to kv4j's exceptions and its failure policy. */
final class SqliteErrors {
  private SqliteErrors() {}

  /**
   * Maps an SQLite error to the kv4j exception family, keeping it as the cause: SQLITE_CORRUPT
   * (every extended code: index, sequence, vtab), SQLITE_NOTADB and SQLITE_IOERR_SHORT_READ (a page
   * past the end of a file cut short) are {@link StoreCorruptedException} naming the file, the rest
   * {@link StoreIOException}.
   */
  static StoreException translate(String message, SQLException e, Path file) {
    int code = e.getErrorCode();
    int primary = code & 0xff;
    String text = message + ": " + e.getMessage();
    if (primary == 11 || primary == 26 || code == 522) {
      return new StoreCorruptedException(
          text + " (the database file " + file + " is damaged)", file, -1, e);
    }
    return new StoreIOException(text, e);
  }

  /**
   * Whether an SQLite error comes from the environment, not from the call: an I/O error, a full
   * disk (or {@code max_page_count} reached), a file that cannot be opened (the WAL), a file system
   * without large-file support, a file that turned read-only or was moved under SQLite.
   */
  static boolean isEnvironmental(SQLException e) {
    int primary = e.getErrorCode() & 0xff;
    return primary == 10 // SQLITE_IOERR, every extended code
        || primary == 13 // SQLITE_FULL
        || primary == 14 // SQLITE_CANTOPEN
        || primary == 22 // SQLITE_NOLFS
        || primary == 8; // SQLITE_READONLY (READONLY_DBMOVED, a file made read-only)
  }

  /** SQLITE_CORRUPT or SQLITE_NOTADB. */
  static boolean isCorrupt(SQLException e) {
    int primary = e.getErrorCode() & 0xff;
    return primary == 11 || primary == 26;
  }
}
