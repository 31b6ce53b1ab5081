package io.kv4j.jdbc;

import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractSnapshot;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * A read snapshot: a read-only repeatable-read transaction on a connection of its own (not pooled),
 * begun when the snapshot is taken and ended by closing the connection. Every read is one statement
 * in that transaction, so all see the table as of {@link JdbcStore#snapshot()}. Reads from several
 * threads take turns on the connection; a scan fetches pages by key ({@code k > last ORDER BY k
 * LIMIT n}) rather than holding a result set open, so a scan and other reads of the same snapshot
 * interleave freely.
 */
final class JdbcSnapshot extends AbstractSnapshot {
  private final JdbcStore store;
  private final int fetchSize;
  private final Object guard = new Object();
  private Connection connection; // guarded by guard; null once released

  JdbcSnapshot(JdbcStore store, Connection connection, int fetchSize) {
    super(store);
    this.store = store;
    this.connection = connection;
    this.fetchSize = fetchSize;
  }

  @Override
  protected byte[] doGet(byte[] key) {
    return doGetAll(List.of(key)).get(0);
  }

  @Override
  protected List<byte[]> doGetAll(List<byte[]> keys) {
    synchronized (guard) {
      try {
        return store.readMany(open(), keys, false);
      } catch (SQLException e) {
        throw store.calls.failure("snapshot read of " + keys.size() + " keys", e);
      }
    }
  }

  @Override
  protected AbstractCursor doScan(KeyRange range) {
    return new Pages(range);
  }

  @Override
  protected void release() {
    synchronized (guard) {
      // Closing the session ends its transaction: the server rolls it back.
      SqlServer.closeQuietly(connection);
      connection = null;
    }
  }

  private Connection open() {
    if (connection == null) {
      // Unreachable through AbstractSnapshot, which releases only after reads and cursors ended.
      throw new IllegalStateException("snapshot is closed (" + store.info().describe() + ")");
    }
    return connection;
  }

  /** Up to {@code limit} entries of the range after {@code after} (null: from its start). */
  private List<Entry> page(KeyRange range, byte[] after, int limit) {
    List<byte[]> params = new ArrayList<>();
    String sql = store.rangeQuery(range, after, limit, params);
    synchronized (guard) {
      try (PreparedStatement ps = open().prepareStatement(sql)) {
        for (int i = 0; i < params.size(); i++) {
          ps.setBytes(i + 1, params.get(i));
        }
        List<Entry> rows = new ArrayList<>(Math.min(limit, 1024));
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            rows.add(new Entry(rs.getBytes(1), rs.getBytes(2)));
          }
        }
        return rows;
      } catch (SQLException e) {
        throw store.calls.failure("snapshot scan " + range, e);
      }
    }
  }

  /** A scan of the snapshot, fetched {@code fetchSize} rows per statement. */
  private final class Pages extends AbstractCursor {
    private final KeyRange range;
    private final java.util.ArrayDeque<Entry> buffer = new java.util.ArrayDeque<>();
    private long remaining;
    private byte[] last;
    private boolean exhausted;

    Pages(KeyRange range) {
      super(store, range);
      this.range = range;
      this.remaining = range.limitValue();
    }

    @Override
    protected Entry advance() {
      if (buffer.isEmpty() && !exhausted) {
        int want = (int) Math.min(fetchSize, remaining);
        List<Entry> rows = want == 0 ? List.of() : page(range, last, want);
        buffer.addAll(rows);
        remaining -= rows.size();
        exhausted = rows.size() < want || remaining == 0;
        if (!rows.isEmpty()) {
          last = rows.get(rows.size() - 1).key();
        }
      }
      return buffer.poll();
    }

    @Override
    protected void release() {
      buffer.clear();
      exhausted = true;
    }
  }
}
