package io.kv4j.sqlite;

import io.kv4j.KeyRange;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractSnapshot;
import io.kv4j.spi.AbstractStore;
import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A store in one SQLite database file, or a handle on one of its keyspaces (a table of the same
 * file, see {@link KeyspaceCatalog}). The store owns, and its handles share:
 *
 * <ul>
 *   <li>{@link GroupCommit}: the writer connection (absent when read-only) and its lock; concurrent
 *       single writes are group-committed, batches and keyspace changes run in {@code BEGIN
 *       IMMEDIATE ... COMMIT};
 *   <li>{@link ReadConnections}: pooled read-only connections for point reads, and connections for
 *       cursors and {@link SqliteSnapshot}s, each in its own read transaction (a point-in-time
 *       snapshot in WAL mode);
 *   <li>{@link Maintenance}: {@code compact()} and {@code backup()} on connections of their own.
 * </ul>
 *
 * <p>Opening is {@link StoreOpening}'s; rows are read by {@link RowReads}; {@link Verification} and
 * {@link SqliteStats} do {@code verify()} and {@code stats()}. Every call that touches a connection
 * holds the read side of {@link #lifecycle}; {@link #doClose()} (and a keyspace drop) takes the
 * write side, so no connection is closed (and no table dropped) under a running statement, and
 * every call after close fails with {@link StoreClosedException}.
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
          SqliteProvider.ID, FORMAT, SqliteFiles::ownsFile, Set.of(DB_FILE_NAME));

  /** PRAGMA application_id of files kv4j creates: "kv4j" in ASCII. */
  static final int APPLICATION_ID = 0x6b76346a;

  private final SqliteSettings settings;
  private final StoreDirectory dir;
  private final Path file;
  private final Sql sql; // this store's or handle's table
  private final GroupCommit writes;
  private final ReadConnections reads;
  private final Maintenance maintenance;
  private final ReentrantReadWriteLock lifecycle;
  private final int pageSize;
  private final ReadMode readMode;
  private final boolean releaseSideFiles; // see StoreOpening.releaseSideFiles
  private final KeyspaceCatalog catalog;
  // The store itself, or for a keyspace handle the store it belongs to: the fields above are the
  // store's (but sql), shared by its handles.
  private final SqliteStore root;
  private boolean shut; // the store's only; guarded by lifecycle

  SqliteStore(
      StoreInfo info,
      SqliteSettings settings,
      StoreDirectory dir,
      Path file,
      SqlConn writer,
      int pageSize,
      boolean checksums,
      ReadMode readMode,
      boolean releaseSideFiles) {
    super(info);
    this.root = this;
    this.settings = settings;
    this.dir = dir;
    this.file = file;
    this.sql = new Sql(settings.quotedTable(), checksums);
    this.writes = new GroupCommit(this, writer, file, dir.path(), settings.durability());
    this.reads = new ReadConnections(settings, file, readMode);
    this.maintenance = new Maintenance(settings, dir, file, readMode);
    this.lifecycle = new ReentrantReadWriteLock();
    this.pageSize = pageSize;
    this.readMode = readMode;
    this.releaseSideFiles = releaseSideFiles;
    this.catalog = new KeyspaceCatalog(settings.table(), file);
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
    this.sql = sql;
    this.writes = store.writes;
    this.reads = store.reads;
    this.maintenance = store.maintenance;
    this.lifecycle = store.lifecycle;
    this.pageSize = store.pageSize;
    this.readMode = store.readMode;
    this.releaseSideFiles = store.releaseSideFiles;
    this.catalog = store.catalog;
  }

  // ---------------------------------------------------------------------------------------------
  // Operations

  @Override
  protected byte[] doGet(byte[] key) {
    return read("get", c -> getOn(c, key));
  }

  /** Reads one key of this table on a connection (see {@link RowReads#get}). */
  byte[] getOn(SqlConn c, byte[] key) throws SQLException {
    return getOn(c, sql, key);
  }

  private byte[] getOn(SqlConn c, Sql table, byte[] key) throws SQLException {
    return RowReads.get(c, table, key, describe(), file);
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

  /** Reads keys of this table on a connection (see {@link RowReads#getAll}). */
  List<byte[]> getAllOn(SqlConn c, List<byte[]> keys) throws SQLException {
    return RowReads.getAll(c, sql, keys, describe(), file);
  }

  /** Checks a row of this table against its checksum (see {@link RowReads#checkRow}). */
  void checkRow(byte[] key, byte[] value, int stored) {
    RowReads.checkRow(sql, key, value, stored, describe(), file);
  }

  @Override
  protected void doPut(byte[] key, byte[] value) {
    writes.single(this, new GroupCommit.PendingWrite(sql, key, value));
  }

  @Override
  protected void doDelete(byte[] key) {
    writes.single(this, new GroupCommit.PendingWrite(sql, key, null));
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
    GroupCommit.PendingWrite w = new GroupCommit.PendingWrite(sql, key, value, expected);
    writes.single(this, w);
    return w.matched();
  }

  /**
   * One {@code BEGIN IMMEDIATE ... COMMIT} on the writer, also for a batch naming several
   * keyspaces: they are tables of the one database file, so the batch commits (or, after a crash,
   * recovers) whole. A keyspace the batch names that does not exist yet is created inside the same
   * transaction.
   */
  @Override
  protected void doWrite(WriteBatch batch) {
    writeBatch(batch);
  }

  /**
   * The batch path of {@link #doWrite} with the conditions checked first, in the same {@code BEGIN
   * IMMEDIATE} transaction: the writer lock orders it against every write of this store and the
   * transaction's RESERVED lock against any other SQLite connection writing the file, so nothing
   * writes between the reads and the commit. Each condition key's row is read with {@link
   * RowReads#get} (checksum checked, the value compared byte for byte, not the stored row). A
   * keyspace a condition names that does not exist holds no key and is not created by the
   * condition. When a condition fails the transaction is rolled back: nothing reaches the WAL.
   */
  @Override
  protected boolean doWriteIf(WriteBatch batch) {
    return writeBatch(batch);
  }

  /** Checks the batch's conditions and applies its operations in one transaction; see above. */
  private boolean writeBatch(WriteBatch batch) {
    boolean[] applied = {false};
    writes.write(
        this,
        batch.hasConditions() ? "conditional batch" : "write batch",
        c -> {
          c.exec("BEGIN IMMEDIATE");
          boolean committed = false;
          try {
            Map<String, Sql> tables = new HashMap<>();
            if (!conditionsHold(c, batch, tables)) {
              return null; // rolled back below: nothing was written
            }
            for (int i = 0, n = batch.size(); i < n; i++) {
              Sql t = batch.namesKeyspaces() ? tableOf(c, keyspaceOf(batch, i), tables, true) : sql;
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
            applied[0] = true;
          } finally {
            if (!committed) {
              c.rollbackQuietly();
            }
          }
          return null;
        });
    return applied[0];
  }

  /** Whether every condition of the batch holds, read on the writer inside its transaction. */
  private boolean conditionsHold(SqlConn c, WriteBatch batch, Map<String, Sql> tables)
      throws SQLException {
    for (int i = 0, n = batch.conditionCount(); i < n; i++) {
      Sql t = tableOf(c, conditionKeyspaceOf(batch, i), tables, false);
      byte[] current = t == null ? null : getOn(c, t, batch.conditionKey(i));
      if (!Arrays.equals(current, batch.conditionValue(i))) {
        return false;
      }
    }
    return true;
  }

  /**
   * The statements of the table a batch operation or condition names: the store's own ({@code name}
   * null), this handle's, or a keyspace's, found in the catalog on the writer inside the batch's
   * transaction and, when absent, created there ({@code create}) or answered as null (a condition:
   * an absent keyspace holds no key); {@code seen} keeps them for the rest of the batch.
   */
  private Sql tableOf(SqlConn c, String name, Map<String, Sql> seen, boolean create)
      throws SQLException {
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
        if (!create) {
          return null;
        }
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
    if (writes.readOnly()) {
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
      writes.write(
          this,
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
      ReentrantLock writeLock = writes.lock();
      writeLock.lock();
      try {
        SqlConn writer = writes.connection();
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
        writes.written();
        return tbl != null;
      } finally {
        writeLock.unlock();
      }
    } catch (SQLException e) {
      throw writes.writeError("drop keyspace '" + name + "'", e);
    } finally {
      lifecycle.writeLock().unlock();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Cursors, snapshots, maintenance, lifecycle

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
      SqlConn c = reads.beginSnapshot();
      boolean ok = false;
      try {
        c.queryLong(sql.pin);
        ok = true;
        return new SqliteSnapshot(this, c);
      } finally {
        if (!ok) {
          reads.endSnapshot(this, c);
        }
      }
    } catch (SQLException e) {
      throw SqliteErrors.translate(describe() + ": snapshot failed", e, file);
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  @Override
  protected void doSync() {
    writes.sync(this);
  }

  /** See {@link Maintenance#compact}. */
  @Override
  protected void doCompact() {
    maintenance.compact(this);
  }

  /** See {@link Maintenance#backup}: the whole file, every keyspace. */
  @Override
  protected void doBackup(Path target) throws IOException {
    maintenance.backup(this, target);
  }

  /** See {@link Verification#verify}: the whole file, every keyspace's table. */
  @Override
  protected void doVerify() {
    Verification.verify(this);
  }

  @Override
  protected StoreStats doStats() {
    return SqliteStats.of(this, sql);
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
      try {
        reads.close();
      } catch (SQLException e) {
        failure = e;
      }
      try {
        writes.close();
      } catch (SQLException e) {
        failure = failure == null ? e : failure;
      }
      if (releaseSideFiles && failure == null) {
        StoreOpening.releaseSideFiles(file);
      }
    } finally {
      try {
        dir.close();
      } finally {
        lifecycle.writeLock().unlock();
      }
    }
    if (failure != null) {
      throw SqliteErrors.translate(describe() + ": close failed", failure, file);
    }
  }

  /** Test hook, see {@link GroupCommit#limitGrowthForTest}. */
  void limitGrowthForTest(long pages) throws SQLException {
    writes.limitGrowthForTest(pages);
  }

  // ---------------------------------------------------------------------------------------------
  // Plumbing shared with the parts

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

  GroupCommit writes() {
    return writes;
  }

  ReadConnections reads() {
    return reads;
  }

  Maintenance maintenance() {
    return maintenance;
  }

  int pageSize() {
    return pageSize;
  }

  ReadMode readMode() {
    return readMode;
  }

  /** Whether the store closed its connections; call with the lifecycle lock held. */
  boolean isShut() {
    return root.shut;
  }

  /** Throws if the store (or this handle) is closed; call with the lifecycle read lock held. */
  void ensureOpen() {
    if (root.shut || (root != this && isClosed())) {
      throw new StoreClosedException(describe() + " is closed");
    }
  }

  /** Puts the store in its failed state ({@code failWrites}); the exception to throw. */
  StoreIOException fail(String what, Throwable cause) {
    return failWrites(what, cause);
  }

  /** The failure that put the store in its failed state, or null. */
  StoreIOException failure() {
    return writeFailure();
  }

  /** Borrows a cursor connection in a new read transaction; lifecycle read lock held. */
  SqlConn beginSnapshot() throws SQLException {
    return reads.beginSnapshot();
  }

  /** Ends a cursor's read transaction and returns its connection; lifecycle read lock held. */
  void endSnapshot(SqlConn c) {
    reads.endSnapshot(this, c);
  }

  /** Runs work on a pooled reader (see {@link ReadConnections#read}). */
  <T> T read(String what, SqlWork<T> work) {
    return reads.read(this, what, work);
  }
}
