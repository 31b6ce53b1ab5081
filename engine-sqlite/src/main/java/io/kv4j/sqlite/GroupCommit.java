package io.kv4j.sqlite;

import io.kv4j.Durability;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreException;
import io.kv4j.StoreIOException;
import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The writer: one read-write connection (absent when the store is read-only), used under {@link
 * #lock()}, shared by the store and its keyspace handles. Concurrent single puts, deletes and
 * conditional writes of every handle are group-committed (see {@link #single}); batches and
 * keyspace changes run in {@code BEGIN IMMEDIATE ... COMMIT} through {@link #write}. Errors follow
 * the store's one failure policy (see {@link #writeError}). The queue and its leader are the SPI's
 * {@link io.kv4j.spi.GroupCommit}; this class is its committer.
 */
final class GroupCommit implements io.kv4j.spi.GroupCommit.Committer<GroupCommit.PendingWrite> {
  /** Most single writes one group commit applies; more wait for the next group. */
  private static final int MAX_GROUP_WRITES = 1_000;

  /** Bytes of keys and values after which a group commit stops taking writes. */
  private static final long MAX_GROUP_BYTES = 8 << 20;

  private final SqliteStore store; // the store (not a handle): failure state and messages
  private final SqlConn writer; // null: read-only
  private final Path file;
  private final Path wal;
  private final Path directory;
  private final boolean buffered;
  private final io.kv4j.spi.GroupCommit<PendingWrite> groups;
  private final ReentrantLock writeLock;
  private final AtomicLong singleWrites = new AtomicLong();
  private final AtomicLong singleCommits = new AtomicLong();
  private boolean unsynced; // guarded by writeLock
  private boolean directorySynced; // guarded by writeLock

  GroupCommit(SqliteStore store, SqlConn writer, Path file, Path directory, Durability durability) {
    this.store = store;
    this.writer = writer;
    this.file = file;
    this.wal = SqliteFiles.sideFile(file, "-wal");
    this.directory = directory;
    this.buffered = durability == Durability.BUFFERED;
    this.groups = new io.kv4j.spi.GroupCommit<>(this, MAX_GROUP_WRITES, MAX_GROUP_BYTES);
    this.writeLock = groups.lock();
  }

  /** The writer lock: held for every write, and by verify and compact to keep writes out. */
  ReentrantLock lock() {
    return writeLock;
  }

  /** The writer connection, for a caller holding {@link #lock()}; null when read-only. */
  SqlConn connection() {
    return writer;
  }

  /** Whether the store is read-only (it has no writer). */
  boolean readOnly() {
    return writer == null;
  }

  /** Notes a commit that {@link #sync} must make durable (buffered durability); lock held. */
  void written() {
    if (buffered) {
      unsynced = true;
    }
  }

  long singleWrites() {
    return singleWrites.get();
  }

  long singleCommits() {
    return singleCommits.get();
  }

  /** Runs work on the writer under the writer lock, for the store or handle {@code via}. */
  void write(SqliteStore via, String what, SqliteStore.SqlWork<Void> work) {
    via.lifecycle().readLock().lock();
    try {
      via.ensureOpen();
      writeLock.lock();
      try {
        work.run(writer);
        written();
      } finally {
        writeLock.unlock();
      }
    } catch (SQLException e) {
      throw writeError(what, e);
    } finally {
      via.lifecycle().readLock().unlock();
    }
  }

  /**
   * The exception for a write path's SQLite error, under the one failure policy: an environmental
   * error ({@link SqliteErrors#isEnvironmental}) puts the store into its failed state ({@code
   * failWrites}: "failed until reopened"); so does damage found while writing, which is reported as
   * {@link StoreCorruptedException} (writing on into a damaged B-tree could spread the damage).
   * Anything else (a lock held too long by another program) fails this call only.
   */
  RuntimeException writeError(String what, SQLException e) {
    if (SqliteErrors.isEnvironmental(e)) {
      return store.fail(what + " on " + file, e);
    }
    StoreException t = SqliteErrors.translate(store.describe() + ": " + what + " failed", e, file);
    if (t instanceof StoreCorruptedException) {
      store.fail(what + " found " + file + " damaged", e);
    }
    return t;
  }

  /**
   * Group commit of single puts and deletes: each caller queues its write, then takes the writer
   * lock; whoever holds it commits every queued write in one transaction (one WAL append, one fsync
   * under {@code synchronous=FULL}) and marks them done, so callers that find theirs done just
   * return. A failed group is rolled back and its writes retried one by one, so each caller gets
   * exactly its own outcome.
   */
  void single(SqliteStore via, PendingWrite w) {
    via.lifecycle().readLock().lock();
    try {
      via.ensureOpen();
      if (!groups.submit(w) && !w.done) {
        // Only an Error in the group's leader gets here; the write's caller must not wait forever.
        throw new StoreIOException(
            store.describe() + ": write not applied: its group commit failed", (Throwable) null);
      }
    } finally {
      via.lifecycle().readLock().unlock();
    }
    if (w.error != null) {
      throw w.error;
    }
  }

  /** Payload bytes of a queued write, for the group's byte limit. */
  @Override
  public long bytes(PendingWrite w) {
    return w.key.length + (w.value == null ? 0 : w.value.length);
  }

  /**
   * Only an Error gets out of {@link #commit}: the members it left unfinished are told so by {@link
   * #single}.
   */
  @Override
  public RuntimeException failure(List<PendingWrite> group, Throwable cause) {
    return null;
  }

  /**
   * Commits queued single writes, in queue order, settling each with its own outcome; writer lock
   * held.
   */
  @Override
  public void commit(List<PendingWrite> group) {
    if (store.failure() != null) {
      // Queued before another group failed the store: refuse, as a new call would.
      finish(group, store.fail("write", null));
      return;
    }
    if (group.size() > 1 && commitTogether(group)) {
      return;
    }
    for (PendingWrite w : group) {
      if (store.failure() != null) {
        finish(List.of(w), store.fail(w.what(), null));
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
  }

  /**
   * Commits a group of queued writes in one transaction. Returns false, with nothing applied, when
   * the group should be retried one by one so only the failing write reports its failure.
   */
  private boolean commitTogether(List<PendingWrite> group) {
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
      return true;
    } catch (SQLException e) {
      if (SqliteErrors.isEnvironmental(e) || SqliteErrors.isCorrupt(e)) {
        // The store is failed now; every write of the group gets the failure.
        finish(group, writeError("group commit of " + group.size() + " writes", e));
        return true;
      }
      // Fall through: retry one by one so only the failing write reports the failure.
    } catch (RuntimeException e) {
      // Fall through, as above.
    }
    return false;
  }

  /**
   * Applies one queued write on the writer inside a transaction: for a conditional write, reads the
   * row first and writes only when it holds the expected value (recording the answer).
   */
  private void apply(PendingWrite w) throws SQLException {
    Sql sql = w.sql;
    if (w.conditional) {
      byte[] current = RowReads.get(writer, sql, w.key, store.describe(), file);
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

  private void finish(List<PendingWrite> group, RuntimeException error) {
    if (error == null) {
      singleWrites.addAndGet(group.size());
      written();
    }
    for (PendingWrite w : group) {
      w.error = error;
      w.done = true;
    }
  }

  /** Makes buffered writes durable: fsync of the WAL, the file and once the directory. */
  void sync(SqliteStore via) {
    if (writer == null) {
      return; // read-only: nothing of ours to make durable
    }
    via.lifecycle().readLock().lock();
    try {
      via.ensureOpen();
      writeLock.lock();
      try {
        if (!unsynced && directorySynced) {
          return;
        }
        // synchronous=NORMAL does not fsync the WAL on commit; fsync it (and the database file,
        // which checkpoints wrote to) directly. A checkpoint would not do: an open cursor can stop
        // it from syncing anything.
        SqliteFiles.fsync(wal);
        SqliteFiles.fsync(file);
        if (!directorySynced) {
          StoreDirectory.syncDirectory(directory);
          directorySynced = true;
        }
        unsynced = false;
      } catch (IOException e) {
        throw store.fail("sync (fsync of " + wal + " and " + file + ")", e);
      } finally {
        writeLock.unlock();
      }
    } finally {
      via.lifecycle().readLock().unlock();
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

  /**
   * A single put (value non-null) or delete waiting for a group commit, possibly conditional on the
   * key's current value. {@code done}, {@code error} and {@code matched} are written and read under
   * the writer lock.
   */
  static final class PendingWrite {
    final Sql sql; // the table of the handle the write came through
    final byte[] key;
    final byte[] value;
    final boolean conditional;
    final byte[] expected; // conditional only: null = the key must be absent
    private boolean done;
    private boolean matched;
    private RuntimeException error;

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

    /** For a conditional write, once done: whether it found the expected value and wrote. */
    boolean matched() {
      return matched;
    }

    String what() {
      if (conditional) {
        return expected == null ? "putIfAbsent" : value == null ? "delete if" : "replace";
      }
      return value == null ? "delete" : "put";
    }
  }

  /** Closes the writer connection; the last connection to close checkpoints and deletes the WAL. */
  void close() throws SQLException {
    if (writer != null) {
      writer.close();
    }
  }
}
