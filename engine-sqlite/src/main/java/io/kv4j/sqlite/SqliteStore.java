package io.kv4j.sqlite;

import io.kv4j.Durability;
import io.kv4j.KeyRange;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractSnapshot;
import io.kv4j.spi.AbstractStore;
import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
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
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
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
 *       single puts, deletes and conditional writes are group-committed (see {@link #single}),
 *       batches run in {@code BEGIN IMMEDIATE ... COMMIT};
 *   <li>a bounded pool of read-only connections for point reads, getAll, stats and verify, borrowed
 *       and returned per call;
 *   <li>a pool of read-only connections for cursors and {@link SqliteSnapshot}s: each holds one for
 *       its lifetime, inside its own read transaction, which in WAL mode is a point-in-time
 *       snapshot;
 *   <li>short-lived connections of their own for {@code compact()} ({@code VACUUM}) and {@code
 *       backup()} ({@code VACUUM INTO}), which SQLite refuses on a connection with active
 *       statements.
 * </ul>
 *
 * <p>Every call that touches a connection holds the read side of {@link #lifecycle}; {@link
 * #doClose()} takes the write side, so no connection is closed under a running statement, and every
 * call after close fails with {@link StoreClosedException}.
 */
final class SqliteStore extends AbstractStore {
  /** The database file inside the store directory. */
  static final String DB_FILE_NAME = "kv.sqlite";

  /**
   * The format recorded in the store's identity file: 2 for stores this version creates, whose
   * tables carry row checksums unless created with {@code checksums=false}; 1 for stores made
   * before identities existed (adopted). Which rows carry checksums is decided per table by its
   * schema (the {@value RowChecksum#COLUMN} column), because the database file travels without its
   * directory.
   */
  static final int FORMAT = 2;

  /** What the store directory holds: the database and SQLite's side files, nothing else. */
  static final StoreDirectory.Layout LAYOUT =
      new StoreDirectory.Layout(
          SqliteProvider.ID, FORMAT, SqliteStore::ownsFile, Set.of(DB_FILE_NAME));

  /** PRAGMA application_id of files kv4j creates: "kv4j" in ASCII. */
  static final int APPLICATION_ID = 0x6b76346a;

  /** Most single writes one group commit applies; more wait for the next group. */
  private static final int MAX_GROUP_WRITES = 1_000;

  /** Bytes of keys and values after which a group commit stops taking writes. */
  private static final long MAX_GROUP_BYTES = 8 << 20;

  /** Idle cursor connections kept open for the next cursor. */
  private static final int IDLE_CURSOR_CONNECTIONS = 2;

  /** Most lines of an {@code integrity_check} report quoted in an exception. */
  private static final int REPORTED_PROBLEMS = 5;

  /**
   * How read-only connections open the file. {@link #SHARED} takes part in SQLite's WAL locking (it
   * needs the {@code -shm} file, which SQLite creates if the directory is writable), so it may read
   * while a writer writes. {@link #IMMUTABLE} ({@code immutable=1}) takes no lock and reads the
   * database file alone: the only way to read a WAL-mode file in a directory nobody may write
   * (read-only media) when SQLite's side files are absent.
   */
  enum ReadMode {
    SHARED,
    IMMUTABLE
  }

  private final SqliteSettings settings;
  private final StoreDirectory dir;
  private final Path file;
  private final Path wal;
  private final Sql sql;
  private final SqlConn writer;
  private final ConnectionPool readers;
  private final ConnectionPool cursorConnections;
  private final ReentrantLock writeLock;
  private final ConcurrentLinkedQueue<PendingWrite> pending;
  private final AtomicLong singleWrites;
  private final AtomicLong singleCommits;
  private final AtomicInteger snapshots;
  private final AtomicLong compactVacuums;
  private final AtomicLong compactVacuumsSkipped;
  private final ReentrantReadWriteLock lifecycle;
  private final int pageSize;
  private final ReadMode readMode;
  private final KeyspaceCatalog catalog;
  // The store itself, or for a keyspace handle the store it belongs to: the fields above are the
  // store's, shared by its handles; the flags below are used on the store only (root.x).
  private final SqliteStore root;
  private boolean shut; // guarded by lifecycle
  private boolean unsynced; // guarded by writeLock
  private boolean directorySynced; // guarded by writeLock

  private SqliteStore(
      StoreInfo info,
      SqliteSettings settings,
      StoreDirectory dir,
      Path file,
      SqlConn writer,
      int pageSize,
      boolean checksums,
      ReadMode readMode) {
    super(info);
    this.root = this;
    this.lifecycle = new ReentrantReadWriteLock();
    this.writeLock = new ReentrantLock();
    this.pending = new ConcurrentLinkedQueue<>();
    this.singleWrites = new AtomicLong();
    this.singleCommits = new AtomicLong();
    this.snapshots = new AtomicInteger();
    this.compactVacuums = new AtomicLong();
    this.compactVacuumsSkipped = new AtomicLong();
    this.catalog = new KeyspaceCatalog(settings.table(), file);
    this.settings = settings;
    this.dir = dir;
    this.file = file;
    this.wal = sideFile(file, "-wal");
    this.sql = new Sql(settings.quotedTable(), checksums);
    this.writer = writer;
    this.pageSize = pageSize;
    this.readMode = readMode;
    this.readers =
        new ConnectionPool(
            () -> openReader(settings, file, readMode),
            settings.readerPoolSize(),
            settings.readerPoolSize());
    this.cursorConnections =
        new ConnectionPool(
            () -> openReader(settings, file, readMode), Integer.MAX_VALUE, IDLE_CURSOR_CONNECTIONS);
  }

  /**
   * A keyspace handle: the store's connections, locks and group-commit queue, its own table's
   * statements. It owns nothing, so its {@link #doClose()} releases nothing.
   */
  private SqliteStore(SqliteStore store, String keyspace, Sql sql) {
    super(store, keyspace);
    this.root = store;
    this.settings = store.settings;
    this.dir = store.dir;
    this.file = store.file;
    this.wal = store.wal;
    this.sql = sql;
    this.writer = store.writer;
    this.readers = store.readers;
    this.cursorConnections = store.cursorConnections;
    this.writeLock = store.writeLock;
    this.pending = store.pending;
    this.singleWrites = store.singleWrites;
    this.singleCommits = store.singleCommits;
    this.snapshots = store.snapshots;
    this.compactVacuums = store.compactVacuums;
    this.compactVacuumsSkipped = store.compactVacuumsSkipped;
    this.lifecycle = store.lifecycle;
    this.pageSize = store.pageSize;
    this.readMode = store.readMode;
    this.catalog = store.catalog;
  }

  // ---------------------------------------------------------------------------------------------
  // Opening

  /**
   * Whether a file name in the store directory is the engine's: the database and its side files.
   */
  static boolean ownsFile(String name) {
    return name.equals(DB_FILE_NAME)
        || name.equals(DB_FILE_NAME + "-wal")
        || name.equals(DB_FILE_NAME + "-shm")
        || name.equals(DB_FILE_NAME + "-journal");
  }

  static Path sideFile(Path file, String suffix) {
    return file.resolveSibling(file.getFileName() + suffix);
  }

  /**
   * Opens a store. {@link StoreDirectory} decides first (create rules, lock, identity, foreign
   * files); the engine touches no file before it has. A new store's database is created complete
   * (page size, WAL mode, table, checkpointed and synced) before its identity is recorded; an
   * existing one must have a database file whose header and length agree ({@link DatabaseHeader})
   * and is opened without SQLite's create flag, so a missing file is never re-created.
   */
  static SqliteStore open(StoreConfig config, SqliteSettings s) {
    StoreDirectory dir = StoreDirectory.open(config, LAYOUT);
    Path file = dir.path().resolve(DB_FILE_NAME);
    String where = "engine 'sqlite' at " + dir.path();
    SqlConn writer = null;
    SqliteStore store = null;
    boolean ok = false;
    try {
      ReadMode mode = ReadMode.SHARED;
      if (!dir.isNew()) {
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
            sizeOf(sideFile(file, "-wal")) > 0 || sizeOf(sideFile(file, "-journal")) > 0;
        DatabaseHeader.check(file, pagesElsewhere, where);
        if (s.readOnly()) {
          mode = readMode(dir.path(), file, where);
        }
      }
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
      store = new SqliteStore(info, s, dir, file, writer, pageSize, checksums, mode);
      store.warmUp();
      if (writer != null) {
        // The WAL file is (re)created by every read-write open; make its directory entry durable
        // so commits that fsync it are, then record a new store's identity.
        StoreDirectory.syncDirectory(dir.path());
        dir.created();
      }
      ok = true;
      return store;
    } catch (SQLException e) {
      throw translate(where + ": cannot open " + file, e, file);
    } catch (IOException e) {
      throw new StoreIOException(where + ": cannot open " + file + ": " + e, e);
    } finally {
      if (!ok) {
        closeAfterFailedOpen(store, writer, dir);
      }
    }
  }

  /**
   * How a read-only store reads: {@link ReadMode#SHARED} when SQLite can take part in WAL locking
   * (the directory is writable, so it may create {@code -shm} and {@code -wal}, or both exist);
   * otherwise {@link ReadMode#IMMUTABLE}, but only when no WAL or rollback journal holds pages the
   * database file lacks: {@code immutable=1} would ignore them and read an older state.
   */
  static ReadMode readMode(Path dir, Path file, String where) {
    Path walFile = sideFile(file, "-wal");
    Path shm = sideFile(file, "-shm");
    if (Files.isWritable(dir) || (Files.exists(walFile) && Files.exists(shm))) {
      return ReadMode.SHARED;
    }
    long walBytes = sizeOf(walFile);
    long journalBytes = sizeOf(sideFile(file, "-journal"));
    if (walBytes == 0 && journalBytes == 0) {
      return ReadMode.IMMUTABLE;
    }
    throw new StoreIOException(
        where
            + ": cannot open read-only: the directory is not writable and "
            + (journalBytes > 0
                ? "the rollback journal " + sideFile(file, "-journal") + " holds a transaction"
                : "the WAL " + walFile + " holds commits not yet copied into " + file)
            + " that only a connection able to create SQLite's side files can read; open the store"
            + " once read-write (or read-only from a process that may write the directory) so"
            + " SQLite recovers it",
        (Throwable) null);
  }

  private static void closeAfterFailedOpen(SqliteStore store, SqlConn writer, StoreDirectory dir) {
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

  private static SqlConn openReader(SqliteSettings s, Path file, ReadMode mode)
      throws SQLException {
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
            where
                + ": table '"
                + s.table()
                + "' does not exist in "
                + file
                + (s.readOnly() ? "" : " and create-if-missing is false"),
            (Throwable) null);
      }
      c.exec("BEGIN IMMEDIATE");
      try {
        c.exec(Sql.createTable(s.quotedTable(), s.checksums()));
        if (appId == 0) {
          c.exec("PRAGMA application_id=" + APPLICATION_ID);
        }
        c.exec("COMMIT");
      } catch (SQLException | RuntimeException e) {
        c.rollbackQuietly();
        throw e;
      }
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
    return checksums;
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
    return read("get", c -> getOn(c, key));
  }

  /**
   * Reads one key on a connection: a pooled reader, a snapshot's (inside its read transaction) or
   * the writer (inside a conditional write's transaction). Checks the row's checksum against the
   * key asked for.
   */
  byte[] getOn(SqlConn c, byte[] key) throws SQLException {
    return getOn(c, sql, key);
  }

  /** {@link #getOn(SqlConn, byte[])} on a given table (a queued write's). */
  private byte[] getOn(SqlConn c, Sql sql, byte[] key) throws SQLException {
    PreparedStatement ps = c.prepare(sql.get);
    ps.setBytes(1, key);
    try (ResultSet rs = ps.executeQuery()) {
      if (!rs.next()) {
        return null;
      }
      byte[] v = rs.getBytes(1);
      if (v == null) {
        v = new byte[0];
      }
      if (sql.checksums) {
        checkRow(sql, key, v, rs.getInt(2));
      }
      return v;
    }
  }

  /**
   * Reads many keys: each distinct key once, in chunks of at most {@value Sql#GET_ALL_CHUNK} keys,
   * one {@code SELECT ... WHERE k IN (...)} statement per chunk. More than one chunk runs inside
   * one read transaction, so the answer is one point in time (a snapshot's connection is inside its
   * own already).
   */
  @Override
  protected List<byte[]> doGetAll(List<byte[]> keys) {
    return read(
        "getAll",
        c -> {
          boolean txn = keys.size() > Sql.GET_ALL_CHUNK;
          if (!txn) {
            return getAllOn(c, keys);
          }
          c.exec("BEGIN");
          boolean done = false;
          try {
            List<byte[]> values = getAllOn(c, keys);
            c.exec("COMMIT");
            done = true;
            return values;
          } finally {
            if (!done) {
              c.rollbackQuietly();
            }
          }
        });
  }

  /**
   * {@link #doGetAll} on a given connection. Statements come in sizes that are powers of two (the
   * last chunk is padded by repeating its last key), so a connection caches at most {@value
   * Sql#GET_ALL_SIZES} of them. Each row's key must be one the chunk asked for and come once, and
   * its checksum is checked against that key: a damaged key index that leads to another key's row
   * fails here as in a get.
   */
  List<byte[]> getAllOn(SqlConn c, List<byte[]> keys) throws SQLException {
    Map<ByteBuffer, byte[]> found = new HashMap<>();
    List<ByteBuffer> distinct = new ArrayList<>(new LinkedHashSet<>(wrapAll(keys)));
    for (int from = 0; from < distinct.size(); from += Sql.GET_ALL_CHUNK) {
      List<ByteBuffer> chunk =
          distinct.subList(from, Math.min(distinct.size(), from + Sql.GET_ALL_CHUNK));
      Set<ByteBuffer> asked = new HashSet<>(chunk);
      int size = Sql.getAllSize(chunk.size());
      PreparedStatement ps = c.prepare(sql.getAll[Integer.numberOfTrailingZeros(size)]);
      for (int i = 0; i < size; i++) {
        ps.setBytes(i + 1, chunk.get(Math.min(i, chunk.size() - 1)).array());
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          byte[] k = rs.getBytes(1);
          byte[] v = rs.getBytes(2);
          if (v == null) {
            v = new byte[0];
          }
          ByteBuffer kb = k == null ? null : ByteBuffer.wrap(k);
          if (kb == null || !asked.contains(kb) || found.containsKey(kb)) {
            throw new StoreCorruptedException(
                describe()
                    + ": getAll on table "
                    + sql.table
                    + " in "
                    + file
                    + " read "
                    + (kb == null
                        ? "a row without a key"
                        : (found.containsKey(kb) ? "a second row of key " : "a row of key ")
                            + showKey(k)
                            + (found.containsKey(kb) ? "" : ", which it did not ask for"))
                    + ": its key index is damaged; run PRAGMA integrity_check (kv4j verify)",
                file,
                -1);
          }
          if (sql.checksums) {
            checkRow(k, v, rs.getInt(3));
          }
          found.put(kb, v);
        }
      }
    }
    List<byte[]> values = new ArrayList<>(keys.size());
    Set<ByteBuffer> handedOut = new HashSet<>();
    for (byte[] key : keys) {
      ByteBuffer kb = ByteBuffer.wrap(key);
      byte[] v = found.get(kb);
      // A key asked for twice gets its own copy each time: arrays handed out are the caller's.
      values.add(v == null ? null : handedOut.add(kb) ? v : v.clone());
    }
    return values;
  }

  private static List<ByteBuffer> wrapAll(List<byte[]> keys) {
    List<ByteBuffer> out = new ArrayList<>(keys.size());
    for (byte[] k : keys) {
      out.add(ByteBuffer.wrap(k));
    }
    return out;
  }

  /**
   * Checks a row against its stored checksum, computed over the key that was asked for (a get) or
   * read (a scan): a row reached through a damaged index fails here too.
   *
   * @throws StoreCorruptedException if the checksum does not match
   */
  void checkRow(byte[] key, byte[] value, int stored) {
    checkRow(sql, key, value, stored);
  }

  private void checkRow(Sql sql, byte[] key, byte[] value, int stored) {
    int computed = RowChecksum.of(key, value);
    if (computed != stored) {
      throw new StoreCorruptedException(
          describe()
              + ": the row of key "
              + showKey(key)
              + " in table "
              + sql.table
              + " of "
              + file
              + " fails its checksum (stored "
              + RowChecksum.COLUMN
              + " "
              + Integer.toHexString(stored)
              + ", computed "
              + Integer.toHexString(computed)
              + " over key and value): the database file is damaged; run PRAGMA integrity_check"
              + " (kv4j verify) and restore the file from a backup",
          file,
          -1);
    }
  }

  /** A key for messages: hex, the first 32 bytes. */
  static String showKey(byte[] key) {
    int n = Math.min(key.length, 32);
    return "0x"
        + HexFormat.of().formatHex(key, 0, n)
        + (key.length > n ? "... (" + key.length + " bytes)" : "");
  }

  @Override
  protected void doPut(byte[] key, byte[] value) {
    single(new PendingWrite(sql, key, value));
  }

  @Override
  protected void doDelete(byte[] key) {
    single(new PendingWrite(sql, key, null));
  }

  /**
   * A conditional write joins the group-commit queue like a put: whoever holds the writer lock
   * reads the key's row (checking its checksum) and writes only if it holds {@code expected}, in
   * the same {@code BEGIN IMMEDIATE} transaction as the other queued writes, in queue order. The
   * writer lock orders it against every write of this store, and the transaction's RESERVED lock
   * against any other SQLite connection that writes the file (kv4j's directory lock keeps other
   * kv4j stores out, but not the {@code sqlite3} shell). Durable as a put: it commits with the
   * group; a comparison that fails writes nothing.
   */
  @Override
  protected boolean doCompareAndSet(byte[] key, byte[] expected, byte[] value) {
    PendingWrite w = new PendingWrite(sql, key, value, expected);
    single(w);
    return w.matched;
  }

  /**
   * One {@code BEGIN IMMEDIATE ... COMMIT} on the writer, also for a batch naming several
   * keyspaces: they are tables of the one database file, so the batch commits (or, after a crash,
   * recovers) whole. A keyspace the batch names that does not exist yet is created inside the same
   * transaction.
   */
  @Override
  protected void doWrite(WriteBatch batch) {
    write(
        "write batch",
        c -> {
          c.exec("BEGIN IMMEDIATE");
          boolean committed = false;
          try {
            Map<String, Sql> tables = new HashMap<>();
            for (int i = 0, n = batch.size(); i < n; i++) {
              Sql t = batch.namesKeyspaces() ? tableOf(c, keyspaceOf(batch, i), tables) : sql;
              if (batch.isDelete(i)) {
                PreparedStatement delete = c.prepare(t.delete);
                delete.setBytes(1, batch.key(i));
                delete.executeUpdate();
              } else {
                PreparedStatement upsert = c.prepare(t.upsert);
                t.bindUpsert(upsert, batch.key(i), batch.value(i));
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

  /**
   * The statements of the table a batch operation writes: the store's own ({@code name} null), this
   * handle's, or a keyspace's, found in (or added to) the catalog on the writer inside the batch's
   * transaction; {@code seen} keeps them for the rest of the batch.
   */
  private Sql tableOf(SqlConn c, String name, Map<String, Sql> seen) throws SQLException {
    if (name == null) {
      return root.sql;
    }
    if (name.equals(keyspaceName())) {
      return sql;
    }
    Sql t = seen.get(name);
    if (t == null) {
      String tbl = catalog.find(c, name);
      if (tbl == null) {
        tbl = catalog.create(c, name, root.sql.checksums);
      }
      t = catalog.statements(c, name, tbl);
      seen.put(name, t);
    }
    return t;
  }

  // ---------------------------------------------------------------------------------------------
  // Keyspaces: tables of the same database file, listed in the catalog (see KeyspaceCatalog)

  /**
   * Opens a keyspace handle. A read-write store finds the keyspace in the catalog on the writer,
   * under the writer lock, and creates it (table and catalog row, one transaction) if absent; a
   * read-only store finds it on a reader.
   */
  @Override
  protected AbstractStore doKeyspace(String name) {
    Sql t;
    if (writer == null) {
      t =
          read(
              "open keyspace '" + name + "'",
              c -> {
                String tbl = catalog.find(c, name);
                if (tbl == null) {
                  throw new StoreIOException(
                      describe() + ": keyspace '" + name + "' was dropped", (Throwable) null);
                }
                return catalog.statements(c, name, tbl);
              });
    } else {
      Sql[] out = new Sql[1];
      write(
          "create keyspace '" + name + "'",
          c -> {
            String tbl = catalog.find(c, name);
            if (tbl == null) {
              c.exec("BEGIN IMMEDIATE");
              boolean committed = false;
              try {
                tbl = catalog.create(c, name, sql.checksums);
                c.exec("COMMIT");
                committed = true;
              } finally {
                if (!committed) {
                  c.rollbackQuietly();
                }
              }
            }
            out[0] = catalog.statements(c, name, tbl);
            return null;
          });
      t = out[0];
    }
    return new SqliteStore(this, name, t);
  }

  @Override
  protected List<String> doKeyspaces() {
    return read("keyspaces", catalog::names);
  }

  /**
   * Drops a keyspace: {@code DROP TABLE} and its catalog row in one transaction on the writer. It
   * runs under the write side of the lifecycle lock, so no call is in flight anywhere in the store
   * meanwhile: a call that raced the drop on the keyspace's (already closed) handle either finished
   * before it or finds the handle closed ({@link StoreClosedException}) and never reaches the
   * table. Readers' open transactions (cursors and snapshots of other keyspaces) are not disturbed:
   * in WAL mode they keep reading as of their start.
   */
  @Override
  protected boolean doDropKeyspace(String name) {
    lifecycle.writeLock().lock();
    try {
      ensureOpen();
      writeLock.lock();
      try {
        writer.exec("BEGIN IMMEDIATE");
        boolean committed = false;
        String tbl;
        try {
          tbl = catalog.drop(writer, name);
          writer.exec("COMMIT");
          committed = true;
        } finally {
          if (!committed) {
            writer.rollbackQuietly();
          }
        }
        if (settings.durability() == Durability.BUFFERED) {
          unsynced = true;
        }
        return tbl != null;
      } finally {
        writeLock.unlock();
      }
    } catch (SQLException e) {
      throw writeError("drop keyspace '" + name + "'", e);
    } finally {
      lifecycle.writeLock().unlock();
    }
  }

  @Override
  protected AbstractCursor doScan(KeyRange range) {
    return new SqliteCursor(this, range);
  }

  /**
   * A read transaction on a cursor connection (not a {@code get} reader: snapshots left open cannot
   * starve point reads), pinned by reading the table before it is returned. See {@link
   * SqliteSnapshot} for what an open snapshot costs.
   */
  @Override
  protected AbstractSnapshot doSnapshot() {
    lifecycle.readLock().lock();
    try {
      ensureOpen();
      SqlConn c = beginSnapshot();
      boolean ok = false;
      try {
        c.queryLong(sql.pin);
        ok = true;
        return new SqliteSnapshot(this, c);
      } finally {
        if (!ok) {
          endSnapshot(c);
        }
      }
    } catch (SQLException e) {
      throw translate(describe() + ": snapshot failed", e, file);
    } finally {
      lifecycle.readLock().unlock();
    }
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
        if (!root.unsynced && root.directorySynced) {
          return;
        }
        // synchronous=NORMAL does not fsync the WAL on commit; fsync it (and the database file,
        // which checkpoints wrote to) directly. A checkpoint would not do: an open cursor can stop
        // it from syncing anything.
        fsync(wal);
        fsync(file);
        if (!root.directorySynced) {
          StoreDirectory.syncDirectory(dir.path());
          root.directorySynced = true;
        }
        root.unsynced = false;
      } catch (IOException e) {
        throw failWrites("sync (fsync of " + wal + " and " + file + ")", e);
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
   * <p>While a cursor or a {@link SqliteSnapshot} holds a read transaction, or a backup runs,
   * {@code VACUUM} is skipped and only a {@code PASSIVE} checkpoint runs: the checkpoint could not
   * move the rewritten database past that reader, so {@code VACUUM} would double the disk used
   * (file plus a WAL of the whole database) until the cursor closed. A {@code VACUUM} that SQLite
   * refuses as busy is skipped the same way. Neither is an error; the stats count both ({@code
   * compact-vacuums}, {@code compact-vacuums-skipped}).
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
      throw writeError("compact", e);
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  /**
   * {@code VACUUM INTO} the target's {@value #DB_FILE_NAME}, then the store's identity file beside
   * it. {@code VACUUM INTO} runs as one read transaction on a read-only connection opened for the
   * purpose, so the copy is the database as of one commit while writers go on (WAL: readers never
   * block the writer), also on a read-only store; it copies every table of the file, the page size
   * and the application id, and leaves out free pages. The copy is switched to WAL mode like every
   * file kv4j makes (its connection's close leaves no side file) and synced. While it runs {@code
   * compact()} skips {@code VACUUM}, as for an open snapshot.
   */
  @Override
  protected void doBackup(Path target) throws IOException {
    Path copy = target.resolve(DB_FILE_NAME);
    lifecycle.readLock().lock();
    try {
      ensureOpen();
      snapshots.incrementAndGet();
      try (Connection c = backupConnection();
          PreparedStatement ps = c.prepareStatement("VACUUM INTO ?")) {
        ps.setString(1, copy.toString());
        ps.execute();
      } finally {
        snapshots.decrementAndGet();
      }
      SQLiteConfig cfg = new SQLiteConfig();
      cfg.resetOpenMode(SQLiteOpenMode.CREATE);
      cfg.setBusyTimeout(settings.busyTimeoutMs());
      try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + copy, cfg.toProperties());
          Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("PRAGMA journal_mode=WAL")) {
        String mode = rs.next() ? rs.getString(1) : null;
        verify("journal_mode", "wal", mode == null ? null : mode.toLowerCase(Locale.ROOT), copy);
      }
      fsync(copy);
      Path identity = dir.path().resolve(StoreDirectory.IDENTITY_FILE);
      if (Files.exists(identity)) {
        // The copy is the same store: same engine and format (a read-only open of a store made
        // before identities has none to copy; the copy is then adopted when opened, as it is).
        Path copied = target.resolve(StoreDirectory.IDENTITY_FILE);
        Files.copy(identity, copied);
        fsync(copied);
      }
    } catch (SQLException e) {
      throw translate(describe() + ": backup (VACUUM INTO " + copy + ") failed", e, file);
    } finally {
      lifecycle.readLock().unlock();
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

  /**
   * Checks what a scan does not read. First the database file's header against its length ({@link
   * DatabaseHeader}), when nothing can move either meanwhile: on a read-write store under the
   * writer lock (checkpoints run only there), on an immutable read-only one always. Then {@code
   * PRAGMA integrity_check}, on a read-only connection inside one read transaction: every page of
   * every B-tree, free lists, cell and free-space accounting, and that every index holds exactly
   * the rows of its table, so a key that a damaged key index lost (a get reads null) is reported
   * here. {@code quick_check} skips that last check, which is why it is not used; on 100,000 rows
   * of 1 KiB {@code integrity_check} takes about 2x as long (see README). A scan checks every row's
   * checksum; together they read every byte of the file's pages.
   */
  @Override
  protected void doVerify() {
    lifecycle.readLock().lock();
    try {
      ensureOpen();
      if (writer != null || readMode == ReadMode.IMMUTABLE) {
        if (writer != null) {
          writeLock.lock();
        }
        try {
          boolean pagesElsewhere = sizeOf(wal) > 0 || sizeOf(sideFile(file, "-journal")) > 0;
          DatabaseHeader.check(file, pagesElsewhere, describe());
        } catch (IOException e) {
          throw new StoreIOException(describe() + ": verify cannot read " + file + ": " + e, e);
        } finally {
          if (writer != null) {
            writeLock.unlock();
          }
        }
      }
    } finally {
      lifecycle.readLock().unlock();
    }
    List<String> problems =
        read(
            "verify (PRAGMA integrity_check)",
            c -> {
              List<String> lines = new ArrayList<>();
              try (ResultSet rs = c.prepare("PRAGMA integrity_check").executeQuery()) {
                while (rs.next()) {
                  lines.add(rs.getString(1));
                }
              }
              return lines;
            });
    if (!(problems.size() == 1 && "ok".equals(problems.get(0)))) {
      List<String> shown =
          problems.size() > REPORTED_PROBLEMS ? problems.subList(0, REPORTED_PROBLEMS) : problems;
      throw new StoreCorruptedException(
          describe()
              + ": PRAGMA integrity_check found the database file "
              + file
              + " damaged ("
              + problems.size()
              + (problems.size() == 1 ? " problem" : " problems")
              + (problems.size() >= 100 ? " or more" : "")
              + "): "
              + String.join("; ", shown)
              + (problems.size() > shown.size() ? "; ..." : ""),
          file,
          -1);
    }
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
    m.put("row-checksums", sql.checksums ? 1 : 0);
    return new StoreStats(figures[0], true, fileBytes + walBytes + shmBytes, m);
  }

  @Override
  protected void doClose() {
    if (root != this) {
      return; // a keyspace handle owns no connection; the store closes them
    }
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
        dir.close();
      } finally {
        lifecycle.writeLock().unlock();
      }
    }
    if (failure != null) {
      throw translate(describe() + ": close failed", failure, file);
    }
  }

  /**
   * Test hook: lets the database grow by at most {@code pages} more pages ({@code PRAGMA
   * max_page_count} on the writer connection), so a later write that needs more fails with
   * SQLITE_FULL exactly as on a full disk, deterministically and without filling one.
   */
  void limitGrowthForTest(long pages) throws SQLException {
    writeLock.lock();
    try {
      long now = writer.queryLong("PRAGMA page_count");
      writer.queryLong("PRAGMA max_page_count=" + (now + pages));
    } finally {
      writeLock.unlock();
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
    if (root.shut || (root != this && isClosed())) {
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
    if (root.shut) {
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
          root.unsynced = true;
        }
      } finally {
        writeLock.unlock();
      }
    } catch (SQLException e) {
      throw writeError(what, e);
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  /**
   * The exception for a write path's SQLite error, under the one failure policy: an environmental
   * error ({@link #isEnvironmental}) puts the store into its failed state ({@link #failWrites}:
   * "failed until reopened"); so does damage found while writing, which is reported as {@link
   * StoreCorruptedException} (writing on into a damaged B-tree could spread the damage). Anything
   * else (a lock held too long by another program) fails this call only.
   */
  private RuntimeException writeError(String what, SQLException e) {
    if (isEnvironmental(e)) {
      return failWrites(what + " on " + file, e);
    }
    StoreException t = translate(describe() + ": " + what + " failed", e, file);
    if (t instanceof StoreCorruptedException) {
      failWrites(what + " found " + file + " damaged", e);
    }
    return t;
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
      if (writeFailure() != null) {
        // Queued before another group failed the store: refuse, as a new call would.
        finish(group, failWrites("write", null));
        return;
      }
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
        } catch (SQLException e) {
          if (isEnvironmental(e) || isCorrupt(e)) {
            // The store is failed now; every write of the group gets the failure.
            finish(group, writeError("group commit of " + group.size() + " writes", e));
            return;
          }
          // Fall through: retry one by one so only the failing write reports the failure.
        } catch (RuntimeException e) {
          // Fall through, as above.
        }
      }
      for (PendingWrite w : group) {
        if (writeFailure() != null) {
          finish(List.of(w), failWrites(w.what(), null));
          continue;
        }
        try {
          applyAlone(w);
          singleCommits.incrementAndGet();
          finish(List.of(w), null);
        } catch (SQLException e) {
          finish(List.of(w), writeError(w.what(), e));
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

  /**
   * Applies one queued write on the writer inside a transaction: for a conditional write, reads the
   * row first and writes only when it holds the expected value (recording the answer).
   */
  private void apply(PendingWrite w) throws SQLException {
    Sql sql = w.sql;
    if (w.conditional) {
      byte[] current = getOn(writer, sql, w.key);
      w.matched =
          w.expected == null
              ? current == null
              : current != null && Arrays.equals(current, w.expected);
      if (!w.matched) {
        return;
      }
    }
    PreparedStatement ps;
    if (w.value == null) {
      ps = writer.prepare(sql.delete);
      ps.setBytes(1, w.key);
    } else {
      ps = writer.prepare(sql.upsert);
      sql.bindUpsert(ps, w.key, w.value);
    }
    ps.executeUpdate();
  }

  /**
   * Applies one queued write in a commit of its own: a plain put or delete as one autocommit
   * statement, a conditional write in {@code BEGIN IMMEDIATE ... COMMIT} so that no other SQLite
   * connection writes between its read and its write.
   */
  private void applyAlone(PendingWrite w) throws SQLException {
    if (!w.conditional) {
      apply(w);
      return;
    }
    writer.exec("BEGIN IMMEDIATE");
    boolean committed = false;
    try {
      apply(w);
      writer.exec("COMMIT");
      committed = true;
    } finally {
      if (!committed) {
        writer.rollbackQuietly();
      }
    }
  }

  private static boolean isCorrupt(SQLException e) {
    int primary = e.getErrorCode() & 0xff;
    return primary == 11 || primary == 26;
  }

  private void finish(List<PendingWrite> group, RuntimeException error) {
    if (error == null) {
      singleWrites.addAndGet(group.size());
      if (settings.durability() == Durability.BUFFERED) {
        root.unsynced = true;
      }
    }
    for (PendingWrite w : group) {
      w.error = error;
      w.done = true;
    }
  }

  /**
   * A single put (value non-null) or delete waiting for a group commit, possibly conditional on the
   * key's current value. {@code done}, {@code error} and {@code matched} are written and read under
   * the writer lock.
   */
  private static final class PendingWrite {
    final Sql sql; // the table of the handle the write came through
    final byte[] key;
    final byte[] value;
    final boolean conditional;
    final byte[] expected; // conditional only: null = the key must be absent
    boolean done;
    boolean matched;
    RuntimeException error;

    PendingWrite(Sql sql, byte[] key, byte[] value) {
      this.sql = sql;
      this.key = key;
      this.value = value;
      this.conditional = false;
      this.expected = null;
    }

    PendingWrite(Sql sql, byte[] key, byte[] value, byte[] expected) {
      this.sql = sql;
      this.key = key;
      this.value = value;
      this.conditional = true;
      this.expected = expected;
    }

    String what() {
      if (conditional) {
        return expected == null ? "putIfAbsent" : value == null ? "delete if" : "replace";
      }
      return value == null ? "delete" : "put";
    }
  }

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

  private static void fsync(Path p) throws IOException {
    if (Files.exists(p)) {
      try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
        ch.force(true);
      }
    }
  }

  private static long sizeOf(Path p) {
    try {
      return Files.size(p);
    } catch (IOException e) {
      return 0; // the WAL and shm files come and go
    }
  }

  /** The SQL text of every statement, with the table name and row format built in. */
  static final class Sql {
    final String table;
    final boolean checksums;
    final String get;
    final String upsert;
    final String delete;
    final String count;

    /**
     * Starts a read transaction's snapshot: SQLite's {@code BEGIN} is deferred, and the read
     * transaction (the WAL end mark it reads up to) begins with the first statement that reads the
     * table.
     */
    final String pin;

    /** {@code getAll[i]}: {@code SELECT k, v[, crc] ... WHERE k IN (2^i parameters)}. */
    final String[] getAll;

    /** Most keys one getAll statement asks for. */
    static final int GET_ALL_CHUNK = 256;

    /** How many getAll statement sizes there are: 1, 2, 4, ..., {@link #GET_ALL_CHUNK}. */
    static final int GET_ALL_SIZES = 9;

    /** The statement size for a chunk of {@code n} keys: the next power of two. */
    static int getAllSize(int n) {
      return Integer.highestOneBit(n) == n ? n : Integer.highestOneBit(n) << 1;
    }

    Sql(String table, boolean checksums) {
      this.table = table;
      this.checksums = checksums;
      String crc = RowChecksum.COLUMN;
      this.get = "SELECT v" + (checksums ? ", " + crc : "") + " FROM " + table + " WHERE k = ?";
      this.upsert =
          checksums
              ? "INSERT INTO "
                  + table
                  + "(k, v, "
                  + crc
                  + ") VALUES(?, ?, ?) ON CONFLICT(k) DO UPDATE SET v = excluded.v, "
                  + crc
                  + " = excluded."
                  + crc
              : "INSERT INTO "
                  + table
                  + "(k, v) VALUES(?, ?) ON CONFLICT(k) DO UPDATE SET v = excluded.v";
      this.delete = "DELETE FROM " + table + " WHERE k = ?";
      this.count = "SELECT count(*) FROM " + table;
      this.pin = "SELECT count(*) FROM (SELECT 1 FROM " + table + " LIMIT 1)";
      this.getAll = new String[GET_ALL_SIZES];
      for (int i = 0; i < GET_ALL_SIZES; i++) {
        StringBuilder sb =
            new StringBuilder("SELECT k, v")
                .append(checksums ? ", " + crc : "")
                .append(" FROM ")
                .append(table)
                .append(" WHERE k IN (?");
        sb.append(",?".repeat((1 << i) - 1)).append(')');
        getAll[i] = sb.toString();
      }
    }

    /** Binds a key and value (and their checksum, in a checksummed table) to {@link #upsert}. */
    void bindUpsert(PreparedStatement ps, byte[] key, byte[] value) throws SQLException {
      ps.setBytes(1, key);
      ps.setBytes(2, value);
      if (checksums) {
        ps.setInt(3, RowChecksum.of(key, value));
      }
    }

    /**
     * The table kv4j creates: a rowid table with a unique BLOB key, chosen by measurement over
     * {@code WITHOUT ROWID} (see README.md and {@code LayoutMeasurement}); with checksums, a third
     * column holds each row's {@link RowChecksum}.
     */
    static String createTable(String table, boolean checksums) {
      return "CREATE TABLE "
          + table
          + "(k BLOB NOT NULL UNIQUE CHECK (typeof(k) = 'blob'),"
          + " v BLOB NOT NULL CHECK (typeof(v) = 'blob')"
          + (checksums
              ? ", "
                  + RowChecksum.COLUMN
                  + " INTEGER NOT NULL CHECK (typeof("
                  + RowChecksum.COLUMN
                  + ") = 'integer')"
              : "")
          + ")";
    }

    /**
     * A range query: {@code lower}/{@code upper} are {@code ">="}, {@code ">"}, {@code "<="},
     * {@code "<"} or null for no bound; the last parameter is the row limit. Columns: k, v and, in
     * a checksummed table, the checksum.
     */
    String range(String lower, String upper, boolean reverse) {
      StringBuilder sb =
          new StringBuilder("SELECT k, v")
              .append(checksums ? ", " + RowChecksum.COLUMN : "")
              .append(" FROM ")
              .append(table);
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
