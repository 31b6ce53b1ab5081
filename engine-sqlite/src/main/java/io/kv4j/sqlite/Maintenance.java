package io.kv4j.sqlite;

import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteOpenMode;

/**
 * {@code compact()} and {@code backup()} of the whole database file (every keyspace's table), on
 * connections opened for the purpose: SQLite refuses {@code VACUUM} on a connection with active
 * statements, which the store's cached ones may be. Shared by the store and its keyspace handles.
 */
final class Maintenance {
  private final SqliteSettings settings;
  private final StoreDirectory dir;
  private final Path file;
  private final ReadMode readMode;
  private final AtomicLong compactVacuums = new AtomicLong();
  private final AtomicLong compactVacuumsSkipped = new AtomicLong();

  Maintenance(SqliteSettings settings, StoreDirectory dir, Path file, ReadMode readMode) {
    this.settings = settings;
    this.dir = dir;
    this.file = file;
    this.readMode = readMode;
  }

  long vacuums() {
    return compactVacuums.get();
  }

  long vacuumsSkipped() {
    return compactVacuumsSkipped.get();
  }

  /**
   * {@code VACUUM} (or {@code PRAGMA incremental_vacuum} in a file with {@code auto_vacuum=
   * INCREMENTAL}), then {@code PRAGMA wal_checkpoint(TRUNCATE)}, under the writer lock so no write
   * interleaves. Both run on a connection opened for the purpose: SQLite refuses {@code VACUUM} on
   * a connection with unfinished statements, which the writer's cached ones may be.
   *
   * <p>While a cursor or a {@link SqliteSnapshot} holds a read transaction, or a backup runs,
   * {@code VACUUM} is skipped and only a {@code PASSIVE} checkpoint runs: the checkpoint could not
   * move the rewritten database past that reader, so {@code VACUUM} would double the disk used
   * (file plus a WAL of the whole database) until the cursor closed. A {@code VACUUM} that SQLite
   * refuses as busy is skipped the same way. Neither is an error; the stats count both ({@code
   * compact-vacuums}, {@code compact-vacuums-skipped}).
   */
  void compact(SqliteStore via) {
    ReentrantLock writeLock = via.writes().lock();
    via.lifecycle().readLock().lock();
    try {
      via.ensureOpen();
      writeLock.lock();
      try (Connection c = compactionConnection()) {
        boolean vacuumed = via.reads().pinned() == 0 && vacuum(c);
        (vacuumed ? compactVacuums : compactVacuumsSkipped).incrementAndGet();
        // TRUNCATE waits (busy-timeout at most) for readers that started during VACUUM and then
        // reports busy in its result row; PASSIVE never waits. Neither throws for a reader.
        run(
            c,
            "PRAGMA wal_checkpoint(" + (via.reads().pinned() == 0 ? "TRUNCATE" : "PASSIVE") + ")");
      } finally {
        writeLock.unlock();
      }
    } catch (SQLException e) {
      throw via.writes().writeError("compact", e);
    } finally {
      via.lifecycle().readLock().unlock();
    }
  }

  /**
   * {@code VACUUM INTO} the target's {@value SqliteStore#DB_FILE_NAME}, then the store's identity
   * file beside it. {@code VACUUM INTO} runs as one read transaction on a read-only connection
   * opened for the purpose, so the copy is the database as of one commit while writers go on (WAL:
   * readers never block the writer), also on a read-only store; it copies every table of the file,
   * the page size and the application id, and leaves out free pages. The copy is switched to WAL
   * mode like every file kv4j makes (its connection's close leaves no side file) and synced. While
   * it runs {@code compact()} skips {@code VACUUM}, as for an open snapshot.
   */
  void backup(SqliteStore via, Path target) throws IOException {
    Path copy = target.resolve(SqliteStore.DB_FILE_NAME);
    via.lifecycle().readLock().lock();
    try {
      via.ensureOpen();
      via.reads().pin();
      try (Connection c = backupConnection();
          PreparedStatement ps = c.prepareStatement("VACUUM INTO ?")) {
        ps.setString(1, copy.toString());
        ps.execute();
      } finally {
        via.reads().unpin();
      }
      SQLiteConfig cfg = new SQLiteConfig();
      cfg.resetOpenMode(SQLiteOpenMode.CREATE);
      cfg.setBusyTimeout(settings.busyTimeoutMs());
      try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + copy, cfg.toProperties());
          Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("PRAGMA journal_mode=WAL")) {
        String mode = rs.next() ? rs.getString(1) : null;
        StoreOpening.verify(
            "journal_mode", "wal", mode == null ? null : mode.toLowerCase(Locale.ROOT), copy);
      }
      SqliteFiles.fsync(copy);
      Path identity = dir.path().resolve(StoreDirectory.IDENTITY_FILE);
      if (Files.exists(identity)) {
        // The copy is the same store: same engine and format (a read-only open of a store made
        // before identities has none to copy; the copy is then adopted when opened, as it is).
        Path copied = target.resolve(StoreDirectory.IDENTITY_FILE);
        Files.copy(identity, copied);
        SqliteFiles.fsync(copied);
      }
    } catch (SQLException e) {
      throw SqliteErrors.translate(
          via.describe() + ": backup (VACUUM INTO " + copy + ") failed", e, file);
    } finally {
      via.lifecycle().readLock().unlock();
    }
  }

  /**
   * A read-only connection for {@code VACUUM INTO}, without cached statements (SQLite refuses
   * {@code VACUUM} on a connection with an active statement), reading the file as the store's
   * readers do ({@code immutable=1} in {@link ReadMode#IMMUTABLE}).
   */
  private Connection backupConnection() throws SQLException {
    SQLiteConfig cfg = new SQLiteConfig();
    cfg.resetOpenMode(SQLiteOpenMode.CREATE);
    cfg.setReadOnly(true);
    cfg.setBusyTimeout(settings.busyTimeoutMs());
    String url =
        readMode == ReadMode.IMMUTABLE
            ? "jdbc:sqlite:" + file.toUri() + "?mode=ro&immutable=1"
            : "jdbc:sqlite:" + file;
    return DriverManager.getConnection(url, cfg.toProperties());
  }

  /**
   * A plain read-write connection with the store's busy timeout, configured without statements: a
   * pragma that returns a row leaves its statement active until reset, and SQLite refuses {@code
   * VACUUM} while any statement of the connection is active.
   */
  private Connection compactionConnection() throws SQLException {
    SQLiteConfig cfg = new SQLiteConfig();
    cfg.setBusyTimeout(settings.busyTimeoutMs());
    return DriverManager.getConnection("jdbc:sqlite:" + file, cfg.toProperties());
  }

  /** Runs the vacuum the file's auto_vacuum mode calls for; false when SQLite says busy. */
  private static boolean vacuum(Connection c) throws SQLException {
    boolean incremental = run(c, "PRAGMA auto_vacuum") == 2;
    try {
      run(c, incremental ? "PRAGMA incremental_vacuum" : "VACUUM");
      return true;
    } catch (SQLException e) {
      int primary = e.getErrorCode() & 0xff;
      if (primary == 5 || primary == 6) { // SQLITE_BUSY, SQLITE_LOCKED: a reader we do not track
        return false;
      }
      throw e;
    }
  }

  /** Runs one statement to completion and closes it; the first column of its last row, or 0. */
  private static long run(Connection c, String sql) throws SQLException {
    long last = 0;
    try (Statement st = c.createStatement()) {
      if (st.execute(sql)) {
        try (ResultSet rs = st.getResultSet()) {
          while (rs.next()) {
            last = rs.getLong(1);
          }
        }
      }
    }
    return last;
  }
}
