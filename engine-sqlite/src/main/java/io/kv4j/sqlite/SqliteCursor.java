package io.kv4j.sqlite;

import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.StoreCorruptedException;
import io.kv4j.spi.AbstractCursor;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.Arrays;

/**
 * A cursor over one read transaction. A store's cursor has a connection of its own: its transaction
 * is opened in the constructor (the first chunk is read there, which fixes the WAL snapshot at
 * {@code scan()} time) and ended in {@link #release()} or as soon as the last chunk is buffered. A
 * snapshot's cursor reads on the snapshot's connection, inside the snapshot's transaction, under
 * the snapshot's monitor (other reads of the snapshot share the connection), and leaves the
 * transaction to the snapshot. Rows are fetched in chunks of at most {@value #CHUNK_ROWS} rows or
 * about {@value #CHUNK_BYTES} bytes; each chunk is a keyset query that restarts strictly after the
 * last key returned, so the statement is never left open between calls.
 */
final class SqliteCursor extends AbstractCursor {
  static final int CHUNK_ROWS = 256;
  static final int CHUNK_BYTES = 1 << 20;

  private final SqliteStore store;
  private final boolean reverse;
  private final byte[] lower;
  private final String lowerOp;
  private final byte[] upper;
  private final String upperOp;
  private final ArrayDeque<Entry> buffer = new ArrayDeque<>();
  private long wanted;
  private byte[] last;
  private boolean drained;
  private SqlConn conn;
  private final SqliteSnapshot snapshot; // null: the cursor owns conn and its transaction

  /** A cursor of the store, on a connection and read transaction of its own. */
  SqliteCursor(SqliteStore store, KeyRange range) {
    this(store, range, null);
  }

  /**
   * A cursor of the store ({@code snapshot} null) or of a snapshot, reading in the snapshot's
   * transaction.
   */
  SqliteCursor(SqliteStore store, KeyRange range, SqliteSnapshot snapshot) {
    super(store, range);
    this.snapshot = snapshot;
    this.store = store;
    this.reverse = range.isReverse();
    this.lower = range.lower();
    this.lowerOp = lower == null ? null : range.lowerInclusive() ? ">=" : ">";
    this.upper = range.upper();
    this.upperOp = upper == null ? null : range.upperInclusive() ? "<=" : "<";
    this.wanted = range.isEmpty() ? 0 : range.limitValue();
    if (wanted == 0) {
      drained = true; // AbstractCursor never asks; no connection needed
      return;
    }
    store.lifecycle().readLock().lock();
    try {
      store.ensureOpen();
      if (snapshot != null) {
        conn = snapshot.connection();
        synchronized (snapshot) {
          fetch();
        }
        return;
      }
      conn = store.beginSnapshot();
      boolean ok = false;
      try {
        fetch();
        endSnapshotIfDrained();
        ok = true;
      } finally {
        if (!ok && conn != null) {
          store.endSnapshot(conn);
          conn = null;
        }
      }
    } catch (SQLException e) {
      throw SqliteErrors.translate(
          store.describe() + ": scan " + range + " failed", e, store.file());
    } finally {
      store.lifecycle().readLock().unlock();
    }
  }

  @Override
  protected Entry advance() {
    if (buffer.isEmpty() && !drained) {
      store.lifecycle().readLock().lock();
      try {
        store.ensureOpen();
        if (snapshot != null) {
          synchronized (snapshot) {
            fetch();
          }
        } else {
          fetch();
          endSnapshotIfDrained();
        }
      } catch (SQLException e) {
        throw SqliteErrors.translate(store.describe() + ": scan failed", e, store.file());
      } finally {
        store.lifecycle().readLock().unlock();
      }
    }
    Entry e = buffer.pollFirst();
    if (e != null) {
      wanted--;
    }
    return e;
  }

  @Override
  protected void release() {
    buffer.clear();
    drained = true;
    if (conn == null || snapshot != null) {
      conn = null; // a snapshot's connection is the snapshot's to end
      return;
    }
    SqlConn c = conn;
    conn = null;
    store.lifecycle().readLock().lock();
    try {
      store.endSnapshot(c);
    } finally {
      store.lifecycle().readLock().unlock();
    }
  }

  /**
   * Once the last chunk is buffered the snapshot has nothing more to give: end the read transaction
   * now, so a cursor left unclosed neither holds a connection nor pins the WAL.
   */
  private void endSnapshotIfDrained() {
    if (drained && conn != null && snapshot == null) {
      SqlConn c = conn;
      conn = null;
      store.endSnapshot(c);
    }
  }

  /**
   * A key must come after the previous one in the scan's direction and lie inside the range: SQLite
   * walks the key index, and a damaged index can hand back keys out of order or outside the bounds
   * (which would also make the keyset restart skip or repeat rows).
   *
   * @throws StoreCorruptedException otherwise
   */
  private void checkOrder(byte[] k) {
    String problem = null;
    if (k == null || k.length == 0) {
      problem = "an empty or NULL key";
    } else if (last != null
        && Integer.signum(Arrays.compareUnsigned(k, last)) != (reverse ? -1 : 1)) {
      problem = "key " + RowReads.showKey(k) + " after key " + RowReads.showKey(last);
    } else if (lower != null && Arrays.compareUnsigned(k, lower) < (lowerOp.equals(">") ? 1 : 0)) {
      problem = "key " + RowReads.showKey(k) + " below the range's lower bound";
    } else if (upper != null && Arrays.compareUnsigned(k, upper) > (upperOp.equals("<") ? -1 : 0)) {
      problem = "key " + RowReads.showKey(k) + " above the range's upper bound";
    }
    if (problem != null) {
      throw new StoreCorruptedException(
          store.describe()
              + ": a scan of table '"
              + store.sql().table
              + "' in "
              + store.file()
              + " read "
              + problem
              + ": its key index is damaged; run PRAGMA integrity_check (kv4j verify)",
          store.file(),
          -1);
    }
  }

  /** Reads the next chunk into the buffer; marks the cursor drained when the range is done. */
  private void fetch() throws SQLException {
    byte[] lo = lower;
    String loOp = lowerOp;
    byte[] hi = upper;
    String hiOp = upperOp;
    if (last != null) {
      if (reverse) {
        hi = last;
        hiOp = "<";
      } else {
        lo = last;
        loOp = ">";
      }
    }
    int limit = (int) Math.min(CHUNK_ROWS, wanted - buffer.size());
    PreparedStatement ps = conn.prepare(store.sql().range(loOp, hiOp, reverse));
    int p = 1;
    if (lo != null) {
      ps.setBytes(p++, lo);
    }
    if (hi != null) {
      ps.setBytes(p++, hi);
    }
    ps.setInt(p, limit);
    int rows = 0;
    long bytes = 0;
    boolean stoppedEarly = false;
    try (ResultSet rs = ps.executeQuery()) {
      boolean checksums = store.sql().checksums;
      while (rs.next()) {
        byte[] k = rs.getBytes(1);
        byte[] v = rs.getBytes(2);
        if (v == null) {
          v = new byte[0];
        }
        checkOrder(k);
        if (checksums) {
          store.checkRow(k, v, rs.getInt(3));
        }
        buffer.addLast(new Entry(k, v));
        last = k;
        rows++;
        bytes += k.length + v.length;
        if (bytes >= CHUNK_BYTES && rows < limit) {
          stoppedEarly = true;
          break;
        }
      }
    }
    if (!stoppedEarly && rows < limit) {
      drained = true;
    }
  }
}
