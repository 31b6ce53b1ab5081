package io.kv4j.sqlite;

import io.kv4j.Durability;
import io.kv4j.KeyRange;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractStore;
import io.kv4j.spi.DirectoryLock;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteOpenMode;

/**
 * A store in one SQLite database file.
 *
 * <p>Connections, all owned by the store and closed exactly once by {@link #doClose()}:
 *
 * <ul>
 *   <li>one writer connection (absent when read-only), used under {@link #writeLock}; concurrent
 *       single puts and deletes are group-committed (see {@link #single}), batches run in {@code
 *       BEGIN IMMEDIATE ... COMMIT};
 *   <li>a bounded pool of read-only connections for point reads and stats, borrowed and returned
 *       per call;
 *   <li>a pool of read-only connections for cursors: a cursor holds one for its lifetime, inside
 *       its own read transaction, which in WAL mode is a point-in-time snapshot.
 * </ul>
 *
 * <p>Every call that touches a connection holds the read side of {@link #lifecycle}; {@link
 * #doClose()} takes the write side, so no connection is closed under a running statement, and every
 * call after close fails with {@link StoreClosedException}.
 */
final class SqliteStore extends AbstractStore {
  /** The database file inside the store directory. */
  static final String DB_FILE_NAME = "kv.sqlite";

  /** PRAGMA application_id of files kv4j creates: "kv4j" in ASCII. */
  static final int APPLICATION_ID = 0x6b76346a;

  private static final byte[] SQLITE_MAGIC =
      "SQLite format 3\0".getBytes(StandardCharsets.US_ASCII);

  /** Most single writes one group commit applies; more wait for the next group. */
  private static final int MAX_GROUP_WRITES = 1_000;

  /** Bytes of keys and values after which a group commit stops taking writes. */
  private static final long MAX_GROUP_BYTES = 8 << 20;

  /** Idle cursor connections kept open for the next cursor. */
  private static final int IDLE_CURSOR_CONNECTIONS = 2;

  private final SqliteSettings settings;
  private final DirectoryLock dirLock;
  private final Path file;
  private final Path wal;
  private final Sql sql;
  private final SqlConn writer;
  private final ConnectionPool readers;
  private final ConnectionPool cursorConnections;
  private final ReentrantLock writeLock = new ReentrantLock();
  private final ConcurrentLinkedQueue<PendingWrite> pending = new ConcurrentLinkedQueue<>();
  private final AtomicLong singleWrites = new AtomicLong();
  private final AtomicLong singleCommits = new AtomicLong();
  private final AtomicInteger snapshots = new AtomicInteger();
  private final AtomicLong compactVacuums = new AtomicLong();
  private final AtomicLong compactVacuumsSkipped = new AtomicLong();
  private final ReentrantReadWriteLock lifecycle = new ReentrantReadWriteLock();
  private final int pageSize;
  private boolean shut; // guarded by lifecycle
  private boolean unsynced; // guarded by writeLock
  private boolean directorySynced; // guarded by writeLock

  private SqliteStore(
      StoreInfo info,
      SqliteSettings settings,
      DirectoryLock dirLock,
      Path file,
      SqlConn writer,
      int pageSize) {
    super(info);
    this.settings = settings;
    this.dirLock = dirLock;
    this.file = file;
    this.wal = Path.of(file + "-wal");
    this.sql = new Sql(settings.quotedTable());
    this.writer = writer;
    this.pageSize = pageSize;
    this.readers =
        new ConnectionPool(
            () -> openReader(settings, file), settings.readerPoolSize(), settings.readerPoolSize());
    this.cursorConnections =
        new ConnectionPool(
            () -> openReader(settings, file), Integer.MAX_VALUE, IDLE_CURSOR_CONNECTIONS);
  }

  // ---------------------------------------------------------------------------------------------
  // Opening

  static SqliteStore open(SqliteSettings s) {
    Path dir = s.directory();
    String where = "engine 'sqlite' at " + dir;
    if (!Files.exists(dir)) {
      if (!s.createIfMissing() || s.readOnly()) {
        throw new StoreIOException(
            where
                + ": directory does not exist"
                + (s.readOnly() ? " (read-only stores are never created)" : "")
                + " and create-if-missing is "
                + s.createIfMissing(),
            new NoSuchFileException(dir.toString()));
      }
      try {
        Files.createDirectories(dir);
      } catch (IOException e) {
        throw new StoreIOException(where + ": cannot create directory: " + e.getMessage(), e);
      }
    } else if (!Files.isDirectory(dir)) {
      throw new StoreIOException(
          where + ": path exists and is not a directory",
          new IOException("not a directory: " + dir));
    }
    DirectoryLock lock = DirectoryLock.acquire(dir, SqliteProvider.ID);
    SqlConn writer = null;
    SqliteStore store = null;
    try {
      Path file = lock.directory().resolve(DB_FILE_NAME);
      where = "engine 'sqlite' at " + lock.directory();
      boolean exists = Files.exists(file);
      if (exists) {
        checkHeader(file, where);
      } else if (s.readOnly() || !s.createIfMissing()) {
        throw new StoreIOException(
            where
                + ": no database file "
                + file
                + (s.readOnly() ? " (read-only stores are never created)" : "")
                + " and create-if-missing is "
                + s.createIfMissing(),
            new NoSuchFileException(file.toString()));
      }
      int pageSize;
      if (s.readOnly()) {
        SqlConn probe = openReader(s, file);
        try {
          checkSchema(probe, s, file, where, false);
          pageSize = (int) probe.queryLong("PRAGMA page_size");
        } finally {
          probe.close();
        }
      } else {
        writer = openWriter(s, file, where);
        checkSchema(writer, s, file, where, true);
        pageSize = (int) writer.queryLong("PRAGMA page_size");
      }
      StoreInfo info =
          new StoreInfo(
              SqliteProvider.ID,
              SqliteProvider.FEATURES,
              SqliteProvider.LIMITS,
              s.durability(),
              lock.directory().toString(),
              s.readOnly());
      store = new SqliteStore(info, s, lock, file, writer, pageSize);
      store.warmUp();
      if (writer != null && s.durability() == Durability.SYNC) {
        // The WAL file exists now; make its directory entry durable so FULL commits are.
        fsyncDirectory(lock.directory());
      }
      return store;
    } catch (SQLException e) {
      closeAfterFailedOpen(store, writer, lock);
      throw translate(
          where + ": cannot open " + lock.directory().resolve(DB_FILE_NAME),
          e,
          lock.directory().resolve(DB_FILE_NAME));
    } catch (IOException e) {
      closeAfterFailedOpen(store, writer, lock);
      throw new StoreIOException(where + ": " + e.getMessage(), e);
    } catch (RuntimeException | Error e) {
      closeAfterFailedOpen(store, writer, lock);
      throw e;
    }
  }

  private static void closeAfterFailedOpen(SqliteStore store, SqlConn writer, DirectoryLock lock) {
    try {
      if (store != null) {
        store.readers.close();
        store.cursorConnections.close();
      }
      if (writer != null) {
        writer.close();
      }
    } catch (SQLException | RuntimeException ignored) {
      // The open failed already; that error is the one to report.
    } finally {
      lock.close();
    }
  }

  /** A non-empty file that does not start with the SQLite magic is foreign data. */
  private static void checkHeader(Path file, String where) throws IOException {
    if (Files.isDirectory(file)) {
      throw new StoreIOException(
          where + ": " + file + " is a directory, expected an SQLite database file",
          new IOException("is a directory: " + file));
    }
    byte[] head = new byte[SQLITE_MAGIC.length];
    int n;
    try (InputStream in = Files.newInputStream(file)) {
      n = in.readNBytes(head, 0, head.length);
    }
    if (n == 0) {
      return; // SQLite treats an empty file as an empty database
    }
    if (n < head.length || !Arrays.equals(head, SQLITE_MAGIC)) {
      throw new StoreCorruptedException(
          where + ": " + file + " is not an SQLite database (no 'SQLite format 3' header)",
          file,
          0);
    }
  }

  private static SqlConn openWriter(SqliteSettings s, Path file, String where) throws SQLException {
    SqlConn c = connect(file, false);
    boolean ok = false;
    try {
      // page_size first: it only takes effect before the first page is written (new file).
      boolean fresh = c.queryLong("PRAGMA page_count") == 0;
      if (fresh) {
        c.exec("PRAGMA page_size=" + s.pageSize());
      }
      String mode = c.queryText("PRAGMA journal_mode=WAL");
      verify("journal_mode", "wal", mode == null ? null : mode.toLowerCase(Locale.ROOT), file);
      configure(c, s, file);
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

  private static SqlConn openReader(SqliteSettings s, Path file) throws SQLException {
    SqlConn c = connect(file, true);
    boolean ok = false;
    try {
      configure(c, s, file);
      String mode = c.queryText("PRAGMA journal_mode");
      if (!"wal".equalsIgnoreCase(mode)) {
        // A read-only connection cannot switch the file to WAL; kv4j's files always are.
        throw new StoreIOException(
            "engine 'sqlite': "
                + file
                + " is not in WAL mode (journal_mode="
                + mode
                + "); open it once read-write to convert it",
            (Throwable) null);
      }
      ok = true;
      return c;
    } finally {
      if (!ok) {
        c.close();
      }
    }
  }

  private static SqlConn connect(Path file, boolean readOnly) throws SQLException {
    SQLiteConfig cfg = new SQLiteConfig();
    if (readOnly) {
      cfg.resetOpenMode(SQLiteOpenMode.CREATE);
      cfg.setReadOnly(true);
    }
    Connection c = DriverManager.getConnection("jdbc:sqlite:" + file, cfg.toProperties());
    return new SqlConn(c);
  }

  /** Per-connection pragmas every connection gets, each verified by reading it back. */
  private static void configure(SqlConn c, SqliteSettings s, Path file) throws SQLException {
    c.exec("PRAGMA busy_timeout=" + s.busyTimeoutMs());
    verify("busy_timeout", s.busyTimeoutMs(), c.queryLong("PRAGMA busy_timeout"), file);
    c.exec("PRAGMA cache_size=" + s.cacheSizePragma());
    verify("cache_size", s.cacheSizePragma(), c.queryLong("PRAGMA cache_size"), file);
    c.exec("PRAGMA mmap_size=" + s.mmapBytes());
    verify("mmap_size", s.mmapBytes(), c.queryLong("PRAGMA mmap_size"), file);
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
   * application id) when allowed and missing.
   */
  private static void checkSchema(
      SqlConn c, SqliteSettings s, Path file, String where, boolean mayCreate) throws SQLException {
    long appId = c.queryLong("PRAGMA application_id");
    if (appId != 0 && appId != APPLICATION_ID) {
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
            where + ": table '" + s.table() + "' does not exist in " + file, (Throwable) null);
      }
      c.exec("BEGIN IMMEDIATE");
      try {
        c.exec(Sql.createTable(s.quotedTable()));
        if (appId == 0) {
          c.exec("PRAGMA application_id=" + APPLICATION_ID);
        }
        c.exec("COMMIT");
      } catch (SQLException | RuntimeException e) {
        c.rollbackQuietly();
        throw e;
      }
      return;
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
  }

  /** Opens one reader up front so a broken reader configuration fails the open, not a get. */
  private void warmUp() throws SQLException {
    SqlConn c = readers.borrow();
    readers.giveBack(c, true);
  }

  // ---------------------------------------------------------------------------------------------
  // Operations

  @Override
  protected byte[] doGet(byte[] key) {
    return read(
        "get",
        c -> {
          PreparedStatement ps = c.prepare(sql.get);
          ps.setBytes(1, key);
          try (ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) {
              return null;
            }
            byte[] v = rs.getBytes(1);
            return v == null ? new byte[0] : v;
          }
        });
  }

  @Override
  protected void doPut(byte[] key, byte[] value) {
    single(new PendingWrite(key, value));
  }

  @Override
  protected void doDelete(byte[] key) {
    single(new PendingWrite(key, null));
  }

  @Override
  protected void doWrite(WriteBatch batch) {
    write(
        "write batch",
        c -> {
          c.exec("BEGIN IMMEDIATE");
          boolean committed = false;
          try {
            PreparedStatement upsert = c.prepare(sql.upsert);
            PreparedStatement delete = c.prepare(sql.delete);
            for (int i = 0, n = batch.size(); i < n; i++) {
              if (batch.isDelete(i)) {
                delete.setBytes(1, batch.key(i));
                delete.executeUpdate();
              } else {
                upsert.setBytes(1, batch.key(i));
                upsert.setBytes(2, batch.value(i));
                upsert.executeUpdate();
              }
            }
            c.exec("COMMIT");
            committed = true;
          } finally {
            if (!committed) {
              c.rollbackQuietly();
            }
          }
          return null;
        });
  }

  @Override
  protected AbstractCursor doScan(KeyRange range) {
    return new SqliteCursor(this, range);
  }

  @Override
  protected void doSync() {
    if (writer == null) {
      return; // read-only: nothing of ours to make durable
    }
    lifecycle.readLock().lock();
    try {
      ensureOpen();
      writeLock.lock();
      try {
        if (!unsynced && directorySynced) {
          return;
        }
        // synchronous=NORMAL does not fsync the WAL on commit; fsync it (and the database file,
        // which checkpoints wrote to) directly. A checkpoint would not do: an open cursor can stop
        // it from syncing anything.
        fsync(wal);
        fsync(file);
        if (!directorySynced) {
          fsyncDirectory(dirLock.directory());
          directorySynced = true;
        }
        unsynced = false;
      } catch (IOException e) {
        throw new StoreIOException(describe() + ": sync failed: " + e.getMessage(), e);
      } finally {
        writeLock.unlock();
      }
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  /**
   * {@code VACUUM} (or {@code PRAGMA incremental_vacuum} in a file with {@code auto_vacuum=
   * INCREMENTAL}), then {@code PRAGMA wal_checkpoint(TRUNCATE)}, under the writer lock so no write
   * interleaves. Both run on a connection opened for the purpose: SQLite refuses {@code VACUUM} on
   * a connection with unfinished statements, which the writer's cached ones may be.
   *
   * <p>While a cursor holds a snapshot, {@code VACUUM} is skipped and only a {@code PASSIVE}
   * checkpoint runs: the checkpoint could not move the rewritten database past that reader, so
   * {@code VACUUM} would double the disk used (file plus a WAL of the whole database) until the
   * cursor closed. A {@code VACUUM} that SQLite refuses as busy is skipped the same way. Neither is
   * an error; the stats count both ({@code compact-vacuums}, {@code compact-vacuums-skipped}).
   */
  @Override
  protected void doCompact() {
    lifecycle.readLock().lock();
    try {
      ensureOpen();
      writeLock.lock();
      try (Connection c = compactionConnection()) {
        boolean vacuumed = snapshots.get() == 0 && vacuum(c);
        (vacuumed ? compactVacuums : compactVacuumsSkipped).incrementAndGet();
        // TRUNCATE waits (busy-timeout at most) for readers that started during VACUUM and then
        // reports busy in its result row; PASSIVE never waits. Neither throws for a reader.
        run(c, "PRAGMA wal_checkpoint(" + (snapshots.get() == 0 ? "TRUNCATE" : "PASSIVE") + ")");
      } finally {
        writeLock.unlock();
      }
    } catch (SQLException e) {
      throw translate(describe() + ": compact failed", e, file);
    } finally {
      lifecycle.readLock().unlock();
    }
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

  @Override
  protected StoreStats doStats() {
    long[] figures =
        read(
            "stats",
            c ->
                new long[] {
                  c.queryLong(sql.count),
                  c.queryLong("PRAGMA page_count"),
                  c.queryLong("PRAGMA freelist_count")
                });
    long fileBytes = sizeOf(file);
    long walBytes = sizeOf(wal);
    long shmBytes = sizeOf(Path.of(file + "-shm"));
    Map<String, Number> m = new LinkedHashMap<>();
    m.put("rows", figures[0]);
    m.put("file-bytes", fileBytes);
    m.put("wal-bytes", walBytes);
    m.put("shm-bytes", shmBytes);
    m.put("page-size-bytes", pageSize);
    m.put("page-count", figures[1]);
    m.put("freelist-pages", figures[2]);
    m.put("reader-connections", readers.openCount());
    m.put("cursor-connections", cursorConnections.openCount());
    m.put("single-writes", singleWrites.get());
    m.put("single-write-commits", singleCommits.get());
    m.put("compact-vacuums", compactVacuums.get());
    m.put("compact-vacuums-skipped", compactVacuumsSkipped.get());
    return new StoreStats(figures[0], true, fileBytes + walBytes + shmBytes, m);
  }

  @Override
  protected void doClose() {
    lifecycle.writeLock().lock();
    SQLException failure = null;
    try {
      if (shut) {
        return;
      }
      shut = true;
      // Readers first, the writer last: the last connection to close checkpoints the WAL into
      // the database file and deletes it, which needs a read-write connection.
      for (ConnectionPool p : new ConnectionPool[] {cursorConnections, readers}) {
        try {
          p.close();
        } catch (SQLException e) {
          failure = failure == null ? e : failure;
        }
      }
      if (writer != null) {
        try {
          writer.close();
        } catch (SQLException e) {
          failure = failure == null ? e : failure;
        }
      }
    } finally {
      try {
        dirLock.close();
      } finally {
        lifecycle.writeLock().unlock();
      }
    }
    if (failure != null) {
      throw translate(describe() + ": close failed", failure, file);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Plumbing shared with the cursor

  /** Work on one connection. */
  interface SqlWork<T> {
    T run(SqlConn c) throws SQLException;
  }

  Sql sql() {
    return sql;
  }

  Path file() {
    return file;
  }

  String describe() {
    return info().describe();
  }

  ReentrantReadWriteLock lifecycle() {
    return lifecycle;
  }

  /** Throws if {@link #doClose()} ran; call with the lifecycle read lock held. */
  void ensureOpen() {
    if (shut) {
      throw new StoreClosedException(describe() + " is closed");
    }
  }

  /** Borrows a cursor connection and starts its read transaction; lifecycle read lock held. */
  SqlConn beginSnapshot() throws SQLException {
    SqlConn c = cursorConnections.borrow();
    try {
      c.exec("BEGIN");
      snapshots.incrementAndGet();
      return c;
    } catch (SQLException | RuntimeException e) {
      cursorConnections.giveBack(c, false);
      throw e;
    }
  }

  /** Ends a cursor's read transaction and returns its connection; lifecycle read lock held. */
  void endSnapshot(SqlConn c) {
    if (shut) {
      return; // doClose closed every connection already
    }
    snapshots.decrementAndGet();
    boolean healthy = true;
    try {
      c.exec("COMMIT");
    } catch (SQLException e) {
      healthy = false;
    }
    try {
      cursorConnections.giveBack(c, healthy);
    } catch (SQLException e) {
      throw translate(describe() + ": cannot close a cursor connection", e, file);
    }
  }

  private <T> T read(String what, SqlWork<T> work) {
    lifecycle.readLock().lock();
    try {
      ensureOpen();
      SqlConn c = readers.borrow();
      boolean healthy = false;
      try {
        T result = work.run(c);
        healthy = true;
        return result;
      } finally {
        readers.giveBack(c, healthy);
      }
    } catch (SQLException e) {
      throw translate(describe() + ": " + what + " failed", e, file);
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  private void write(String what, SqlWork<Void> work) {
    lifecycle.readLock().lock();
    try {
      ensureOpen();
      writeLock.lock();
      try {
        work.run(writer);
        if (settings.durability() == Durability.BUFFERED) {
          unsynced = true;
        }
      } finally {
        writeLock.unlock();
      }
    } catch (SQLException e) {
      throw translate(describe() + ": " + what + " failed", e, file);
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  /**
   * Group commit of single puts and deletes: each caller queues its write, then takes the writer
   * lock; whoever holds it commits every queued write in one transaction (one WAL append, one fsync
   * under {@code synchronous=FULL}) and marks them done, so callers that find theirs done just
   * return. A failed group is rolled back and its writes retried one by one, so each caller gets
   * exactly its own outcome.
   */
  private void single(PendingWrite w) {
    lifecycle.readLock().lock();
    try {
      ensureOpen();
      pending.add(w);
      writeLock.lock();
      try {
        while (!w.done) {
          commitPending();
        }
      } finally {
        writeLock.unlock();
      }
    } finally {
      lifecycle.readLock().unlock();
    }
    if (w.error != null) {
      throw w.error;
    }
  }

  /** Commits queued single writes, in queue order, up to a group limit; writer lock held. */
  private void commitPending() {
    List<PendingWrite> group = new ArrayList<>();
    long bytes = 0;
    PendingWrite next;
    while (group.size() < MAX_GROUP_WRITES
        && bytes < MAX_GROUP_BYTES
        && (next = pending.poll()) != null) {
      group.add(next);
      bytes += next.key.length + (next.value == null ? 0 : next.value.length);
    }
    try {
      if (group.size() > 1) {
        try {
          writer.exec("BEGIN IMMEDIATE");
          boolean committed = false;
          try {
            for (PendingWrite w : group) {
              apply(w);
            }
            writer.exec("COMMIT");
            committed = true;
          } finally {
            if (!committed) {
              writer.rollbackQuietly();
            }
          }
          singleCommits.incrementAndGet();
          finish(group, null);
          return;
        } catch (SQLException | RuntimeException e) {
          // Fall through: retry one by one so only the failing write reports the failure.
        }
      }
      for (PendingWrite w : group) {
        try {
          apply(w);
          singleCommits.incrementAndGet();
          finish(List.of(w), null);
        } catch (SQLException e) {
          finish(List.of(w), translate(describe() + ": " + w.what() + " failed", e, file));
        } catch (RuntimeException e) {
          finish(List.of(w), e);
        }
      }
    } finally {
      // Only an Error gets here with writes unfinished; their callers must not wait forever.
      List<PendingWrite> abandoned = new ArrayList<>();
      for (PendingWrite w : group) {
        if (!w.done) {
          abandoned.add(w);
        }
      }
      if (!abandoned.isEmpty()) {
        finish(
            abandoned,
            new StoreIOException(
                describe() + ": write not applied: its group commit failed", (Throwable) null));
      }
    }
  }

  private void apply(PendingWrite w) throws SQLException {
    PreparedStatement ps;
    if (w.value == null) {
      ps = writer.prepare(sql.delete);
      ps.setBytes(1, w.key);
    } else {
      ps = writer.prepare(sql.upsert);
      ps.setBytes(1, w.key);
      ps.setBytes(2, w.value);
    }
    ps.executeUpdate();
  }

  private void finish(List<PendingWrite> group, RuntimeException error) {
    if (error == null) {
      singleWrites.addAndGet(group.size());
      if (settings.durability() == Durability.BUFFERED) {
        unsynced = true;
      }
    }
    for (PendingWrite w : group) {
      w.error = error;
      w.done = true;
    }
  }

  /**
   * A single put (value non-null) or delete waiting for a group commit. {@code done} and {@code
   * error} are written and read under the writer lock.
   */
  private static final class PendingWrite {
    final byte[] key;
    final byte[] value;
    boolean done;
    RuntimeException error;

    PendingWrite(byte[] key, byte[] value) {
      this.key = key;
      this.value = value;
    }

    String what() {
      return value == null ? "delete" : "put";
    }
  }

  /** Maps an SQLite error to the kv4j exception family, keeping it as the cause. */
  static StoreException translate(String message, SQLException e, Path file) {
    int primary = e.getErrorCode() & 0xff;
    String text = message + ": " + e.getMessage();
    return switch (primary) {
      case 11, 26 -> // SQLITE_CORRUPT, SQLITE_NOTADB
          new StoreCorruptedException(text, file, -1, e);
      default -> new StoreIOException(text, e);
    };
  }

  private static void fsync(Path p) throws IOException {
    if (Files.exists(p)) {
      try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
        ch.force(true);
      }
    }
  }

  private static void fsyncDirectory(Path dir) {
    try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
      ch.force(true);
    } catch (IOException e) {
      // Some platforms cannot open or force a directory; file data is still forced.
    }
  }

  private static long sizeOf(Path p) {
    try {
      return Files.size(p);
    } catch (IOException e) {
      return 0; // the WAL and shm files come and go
    }
  }

  /** The SQL text of every statement, with the table name built in. */
  static final class Sql {
    final String table;
    final String get;
    final String upsert;
    final String delete;
    final String count;

    Sql(String table) {
      this.table = table;
      this.get = "SELECT v FROM " + table + " WHERE k = ?";
      this.upsert =
          "INSERT INTO "
              + table
              + "(k, v) VALUES(?, ?) ON CONFLICT(k) DO UPDATE SET v = excluded.v";
      this.delete = "DELETE FROM " + table + " WHERE k = ?";
      this.count = "SELECT count(*) FROM " + table;
    }

    /**
     * The table kv4j creates: a rowid table with a unique BLOB key, chosen by measurement over
     * {@code WITHOUT ROWID} (see README.md and {@code LayoutMeasurement}).
     */
    static String createTable(String table) {
      return "CREATE TABLE "
          + table
          + "(k BLOB NOT NULL UNIQUE CHECK (typeof(k) = 'blob'),"
          + " v BLOB NOT NULL CHECK (typeof(v) = 'blob'))";
    }

    /**
     * A range query: {@code lower}/{@code upper} are {@code ">="}, {@code ">"}, {@code "<="},
     * {@code "<"} or null for no bound; the last parameter is the row limit.
     */
    String range(String lower, String upper, boolean reverse) {
      StringBuilder sb = new StringBuilder("SELECT k, v FROM ").append(table);
      if (lower != null || upper != null) {
        sb.append(" WHERE ");
        if (lower != null) {
          sb.append("k ").append(lower).append(" ?");
        }
        if (lower != null && upper != null) {
          sb.append(" AND ");
        }
        if (upper != null) {
          sb.append("k ").append(upper).append(" ?");
        }
      }
      return sb.append(" ORDER BY k ")
          .append(reverse ? "DESC" : "ASC")
          .append(" LIMIT ?")
          .toString();
    }
  }
}
