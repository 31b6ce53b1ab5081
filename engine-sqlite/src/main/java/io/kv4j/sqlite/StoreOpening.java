package io.kv4j.sqlite;

import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteOpenMode;

/**
 * Opening a store: the directory's verdict, the database file's header, the connections (every
 * pragma read back after it is set) and the store table's schema. Keyspace tables are checked when
 * a handle opens them ({@link KeyspaceCatalog#statements}).
 */
final class StoreOpening {
  private StoreOpening() {}

  /**
   * Opens a store. {@link StoreDirectory} decides first (create rules, lock, identity, foreign
   * files); the engine touches no file before it has. A new store's database is created complete
   * (page size, WAL mode, table, checkpointed and synced) before its identity is recorded; an
   * existing one must have a database file whose header and length agree ({@link DatabaseHeader})
   * and is opened without SQLite's create flag, so a missing file is never re-created.
   */
  static SqliteStore open(StoreConfig config, SqliteSettings s) {
    StoreDirectory dir = StoreDirectory.open(config, SqliteStore.LAYOUT);
    Path file = dir.path().resolve(SqliteStore.DB_FILE_NAME);
    String where = "engine 'sqlite' at " + dir.path();
    SqlConn writer = null;
    SqliteStore store = null;
    boolean releaseSideFiles = false;
    boolean ok = false;
    try {
      ReadMode mode = dir.isNew() ? ReadMode.SHARED : checkExisting(dir, file, s, where);
      // A read-only store that finds neither side file (the store is closed) has SQLite create
      // both, and lets SQLite remove them when it closes, or when its open fails (see
      // releaseSideFiles).
      releaseSideFiles =
          s.readOnly()
              && mode == ReadMode.SHARED
              && !Files.exists(SqliteFiles.sideFile(file, "-wal"))
              && !Files.exists(SqliteFiles.sideFile(file, "-shm"));
      boolean checksums;
      int pageSize;
      if (s.readOnly()) {
        SqlConn probe = openReader(s, file, mode);
        try {
          checksums = checkSchema(probe, s, file, where, false);
          pageSize = (int) probe.queryLong("PRAGMA page_size");
        } finally {
          probe.close();
        }
      } else {
        writer = openWriter(s, file, dir.isNew());
        checksums = checkSchema(writer, s, file, where, dir.isNew() || s.createIfMissing());
        pageSize = (int) writer.queryLong("PRAGMA page_size");
        if (dir.isNew()) {
          // Copy the new table into the database file and sync it before the identity says a
          // store exists here: a crash must not leave an identity beside an empty file.
          writer.queryText("PRAGMA wal_checkpoint(TRUNCATE)");
        }
      }
      StoreInfo info =
          new StoreInfo(
              SqliteProvider.ID,
              checksums ? SqliteProvider.FEATURES : SqliteProvider.STORE_FEATURES,
              SqliteProvider.LIMITS,
              s.durability(),
              dir.path().toString(),
              s.readOnly());
      store =
          new SqliteStore(info, s, dir, file, writer, pageSize, checksums, mode, releaseSideFiles);
      store.reads().warmUp();
      if (writer != null) {
        // The WAL file is (re)created by every read-write open; make its directory entry durable
        // so commits that fsync it are, then record a new store's identity.
        StoreDirectory.syncDirectory(dir.path());
        dir.created();
      }
      ok = true;
      return store;
    } catch (SQLException e) {
      throw SqliteErrors.translate(where + ": cannot open " + file, e, file);
    } catch (IOException e) {
      throw new StoreIOException(where + ": cannot open " + file + ": " + e, e);
    } finally {
      if (!ok) {
        closeAfterFailedOpen(store, writer, dir);
        if (releaseSideFiles) {
          releaseSideFiles(file);
        }
      }
    }
  }

  /**
   * Checks an existing store's database file before SQLite opens it: present, and its header and
   * length agree ({@link DatabaseHeader}). Returns how a read-only store reads it.
   */
  private static ReadMode checkExisting(
      StoreDirectory dir, Path file, SqliteSettings s, String where) throws IOException {
    if (!Files.isRegularFile(file)) {
      throw new StoreCorruptedException(
          where
              + ": the database file "
              + file
              + " is missing; the directory holds only SQLite's side files: refusing to"
              + " create an empty store in its place (restore the file, or delete the"
              + " directory to start afresh)",
          file,
          -1);
    }
    boolean pagesElsewhere =
        SqliteFiles.sizeOf(SqliteFiles.sideFile(file, "-wal")) > 0
            || SqliteFiles.sizeOf(SqliteFiles.sideFile(file, "-journal")) > 0;
    DatabaseHeader.check(file, pagesElsewhere, where);
    return s.readOnly() ? readMode(dir.path(), file, where) : ReadMode.SHARED;
  }

  /**
   * How a read-only store reads: {@link ReadMode#SHARED} when SQLite can take part in WAL locking
   * (the directory is writable, so it may create {@code -shm} and {@code -wal}, or both exist);
   * otherwise {@link ReadMode#IMMUTABLE}, but only when no WAL or rollback journal holds pages the
   * database file lacks: {@code immutable=1} would ignore them and read an older state.
   */
  static ReadMode readMode(Path dir, Path file, String where) {
    Path walFile = SqliteFiles.sideFile(file, "-wal");
    Path shm = SqliteFiles.sideFile(file, "-shm");
    if (Files.isWritable(dir) || (Files.exists(walFile) && Files.exists(shm))) {
      return ReadMode.SHARED;
    }
    long walBytes = SqliteFiles.sizeOf(walFile);
    long journalBytes = SqliteFiles.sizeOf(SqliteFiles.sideFile(file, "-journal"));
    if (walBytes == 0 && journalBytes == 0) {
      return ReadMode.IMMUTABLE;
    }
    throw new StoreIOException(
        where
            + ": cannot open read-only: the directory is not writable and "
            + (journalBytes > 0
                ? "the rollback journal "
                    + SqliteFiles.sideFile(file, "-journal")
                    + " holds a transaction"
                : "the WAL " + walFile + " holds commits not yet copied into " + file)
            + " that only a connection able to create SQLite's side files can read; open the store"
            + " once read-write (or read-only from a process that may write the directory) so"
            + " SQLite recovers it",
        (Throwable) null);
  }

  /**
   * Removes the {@code -wal} and {@code -shm} files that a read-only store's connections made
   * SQLite create, once they are all closed, through SQLite's own rule: the last connection to a
   * WAL database to close, if it can lock the database file exclusively (no other connection, in
   * any process, has it open), checkpoints the WAL and deletes both files. A read-only connection
   * cannot take that lock, so this opens one read-write connection (never the create flag, no busy
   * wait), reads the schema version so that it joins the WAL, and closes it. Nothing happens when
   * the WAL holds commits (a writer came and went meanwhile: copying them into the database is the
   * next writer's job, never a read-only store's), when another connection has the database open (a
   * writer that came and stays: the files are its own now), or when the file or directory is not
   * writable; the files are then left as SQLite leaves them. With an empty WAL the checkpoint
   * copies nothing: the database file is not written. The WAL is looked at before the connection
   * opens: a writer that opens, commits and closes in the moment the connection lives would leave
   * its commits in the WAL (it cannot checkpoint past this connection), and this connection's close
   * would copy them into the database file, as SQLite's last connection always does. Never throws.
   */
  static void releaseSideFiles(Path file) {
    Path wal = SqliteFiles.sideFile(file, "-wal");
    if (SqliteFiles.sizeOf(wal) != 0
        || (!Files.exists(wal) && !Files.exists(SqliteFiles.sideFile(file, "-shm")))) {
      return;
    }
    SQLiteConfig cfg = new SQLiteConfig();
    cfg.resetOpenMode(SQLiteOpenMode.CREATE);
    cfg.setBusyTimeout(0);
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file, cfg.toProperties());
        PreparedStatement st = c.prepareStatement("PRAGMA schema_version");
        ResultSet rs = st.executeQuery()) {
      rs.next();
    } catch (SQLException e) {
      // Busy, or not writable: the files stay, as SQLite leaves them after read-only connections.
    }
  }

  private static void closeAfterFailedOpen(SqliteStore store, SqlConn writer, StoreDirectory dir) {
    try {
      if (store != null) {
        store.reads().close();
      }
      if (writer != null) {
        writer.close();
      }
    } catch (SQLException | RuntimeException ignored) {
      // The open failed already; that error is the one to report.
    } finally {
      dir.close();
    }
  }

  private static SqlConn openWriter(SqliteSettings s, Path file, boolean fresh)
      throws SQLException {
    SqlConn c = connect(file, false, fresh, false);
    boolean ok = false;
    try {
      // page_size first: it only takes effect before the first page is written (new file).
      if (fresh) {
        c.exec("PRAGMA page_size=" + s.pageSize());
      }
      String mode = c.queryText("PRAGMA journal_mode=WAL");
      verify("journal_mode", "wal", mode == null ? null : mode.toLowerCase(Locale.ROOT), file);
      configure(c, s, file, s.mmapBytes());
      c.exec("PRAGMA synchronous=" + s.synchronous());
      verify("synchronous", s.synchronous(), c.queryLong("PRAGMA synchronous"), file);
      c.exec("PRAGMA wal_autocheckpoint=" + s.walAutocheckpointPages());
      verify(
          "wal_autocheckpoint",
          s.walAutocheckpointPages(),
          c.queryLong("PRAGMA wal_autocheckpoint"),
          file);
      if (fresh) {
        verify("page_size", s.pageSize(), c.queryLong("PRAGMA page_size"), file);
      }
      ok = true;
      return c;
    } finally {
      if (!ok) {
        c.close();
      }
    }
  }

  static SqlConn openReader(SqliteSettings s, Path file, ReadMode mode) throws SQLException {
    boolean immutable = mode == ReadMode.IMMUTABLE;
    SqlConn c = connect(file, true, false, immutable);
    boolean ok = false;
    try {
      // An immutable connection reads through pread, never mmap: it takes no lock, so nothing
      // stops another program from truncating the file under a mapping (SIGBUS).
      configure(c, s, file, immutable ? 0 : s.mmapBytes());
      if (!immutable) {
        String mode2 = c.queryText("PRAGMA journal_mode");
        if (!"wal".equalsIgnoreCase(mode2)) {
          // A read-only connection cannot switch the file to WAL; kv4j's files always are.
          throw new StoreIOException(
              "engine 'sqlite': "
                  + file
                  + " is not in WAL mode (journal_mode="
                  + mode2
                  + "); open it once read-write to convert it",
              (Throwable) null);
        }
      }
      ok = true;
      return c;
    } finally {
      if (!ok) {
        c.close();
      }
    }
  }

  /**
   * A connection. Only a new store's writer may create the file; every other connection opens an
   * existing file or fails, so a file deleted behind kv4j's back is never re-created empty.
   */
  private static SqlConn connect(Path file, boolean readOnly, boolean create, boolean immutable)
      throws SQLException {
    SQLiteConfig cfg = new SQLiteConfig();
    if (!create) {
      cfg.resetOpenMode(SQLiteOpenMode.CREATE);
    }
    if (readOnly) {
      cfg.setReadOnly(true);
    }
    String url =
        immutable ? "jdbc:sqlite:" + file.toUri() + "?mode=ro&immutable=1" : "jdbc:sqlite:" + file;
    Connection c = DriverManager.getConnection(url, cfg.toProperties());
    return new SqlConn(c);
  }

  /** Per-connection pragmas every connection gets, each verified by reading it back. */
  private static void configure(SqlConn c, SqliteSettings s, Path file, long mmapBytes)
      throws SQLException {
    c.exec("PRAGMA busy_timeout=" + s.busyTimeoutMs());
    verify("busy_timeout", s.busyTimeoutMs(), c.queryLong("PRAGMA busy_timeout"), file);
    c.exec("PRAGMA cache_size=" + s.cacheSizePragma());
    verify("cache_size", s.cacheSizePragma(), c.queryLong("PRAGMA cache_size"), file);
    c.exec("PRAGMA mmap_size=" + mmapBytes);
    verify("mmap_size", mmapBytes, c.queryLong("PRAGMA mmap_size"), file);
  }

  static void verify(String pragma, Object expected, Object actual, Path file) {
    if (!String.valueOf(expected).equals(String.valueOf(actual))) {
      throw new StoreIOException(
          "engine 'sqlite': PRAGMA "
              + pragma
              + " on "
              + file
              + " is "
              + actual
              + " after setting it to "
              + expected
              + "; the setting was not applied by this SQLite build",
          (Throwable) null);
    }
  }

  /**
   * Checks the file's application id and the table's columns; creates the table (and stamps the
   * application id) when allowed and missing. Returns whether the table's rows carry checksums.
   *
   * @throws IllegalArgumentException if the {@code checksums} option was given explicitly and
   *     contradicts the existing table
   */
  private static boolean checkSchema(
      SqlConn c, SqliteSettings s, Path file, String where, boolean mayCreate) throws SQLException {
    long appId = c.queryLong("PRAGMA application_id");
    if (appId != 0 && appId != SqliteStore.APPLICATION_ID) {
      throw new StoreCorruptedException(
          where
              + ": "
              + file
              + " is an SQLite database of another application (application_id "
              + appId
              + ")",
          file,
          68);
    }
    Set<String> columns = new HashSet<>();
    PreparedStatement info = c.prepare("SELECT name FROM pragma_table_info(?)");
    info.setString(1, s.table());
    try (ResultSet rs = info.executeQuery()) {
      while (rs.next()) {
        columns.add(rs.getString(1).toLowerCase(Locale.ROOT));
      }
    }
    if (columns.isEmpty()) {
      if (!mayCreate) {
        throw new StoreIOException(
            where
                + ": table '"
                + s.table()
                + "' does not exist in "
                + file
                + (s.readOnly() ? "" : " and create-if-missing is false"),
            (Throwable) null);
      }
      createTable(c, s, appId);
      return s.checksums();
    }
    // Any table with columns k and v and a unique index on k alone works (ON CONFLICT(k) needs
    // it), whichever layout created it.
    PreparedStatement unique =
        c.prepare(
            "SELECT count(*) FROM pragma_index_list(?1) AS il WHERE il.\"unique\" = 1"
                + " AND (SELECT count(*) FROM pragma_index_info(il.name)) = 1"
                + " AND (SELECT lower(name) FROM pragma_index_info(il.name)) = 'k'");
    unique.setString(1, s.table());
    long uniqueOnK;
    try (ResultSet rs = unique.executeQuery()) {
      uniqueOnK = rs.next() ? rs.getLong(1) : 0;
    }
    if (!columns.contains("k") || !columns.contains("v") || uniqueOnK == 0) {
      throw new StoreCorruptedException(
          where
              + ": table '"
              + s.table()
              + "' in "
              + file
              + " is not a kv4j table (expected columns k and v, k the primary key or unique)",
          file,
          -1);
    }
    boolean checksums = columns.contains(RowChecksum.COLUMN);
    checkChecksumsOption(s, file, where, checksums);
    return checksums;
  }

  /** Creates the store's table and stamps the application id, in one transaction. */
  private static void createTable(SqlConn c, SqliteSettings s, long appId) throws SQLException {
    c.exec("BEGIN IMMEDIATE");
    try {
      c.exec(Sql.createTable(s.quotedTable(), s.checksums()));
      if (appId == 0) {
        c.exec("PRAGMA application_id=" + SqliteStore.APPLICATION_ID);
      }
      c.exec("COMMIT");
    } catch (SQLException | RuntimeException e) {
      c.rollbackQuietly();
      throw e;
    }
  }

  /**
   * @throws IllegalArgumentException if the {@code checksums} option was given explicitly and
   *     contradicts the existing table's format
   */
  private static void checkChecksumsOption(
      SqliteSettings s, Path file, String where, boolean checksums) {
    if (s.checksumsGiven() && s.checksums() != checksums) {
      throw new IllegalArgumentException(
          where
              + ": option 'checksums="
              + s.checksums()
              + "' contradicts table '"
              + s.table()
              + "' in "
              + file
              + ", whose rows "
              + (checksums
                  ? "carry checksums (column " + RowChecksum.COLUMN + ")"
                  : "carry no checksums (made before kv4j checksummed rows, or with"
                      + " checksums=false)")
              + "; the option chooses the format of new stores only: drop it to open this"
              + " store as it is, or copy the store into a new one with the format you want:"
              + " kv4j copy --from sqlite:"
              + file.getParent()
              + " --to 'sqlite:<new directory>?checksums="
              + s.checksums()
              + "'");
    }
  }
}
