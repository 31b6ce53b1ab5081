package io.kv4j.jdbc;

import io.kv4j.KeyRange;
import io.kv4j.Limits;
import io.kv4j.StoreConfig;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractSnapshot;
import io.kv4j.spi.AbstractStore;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** A store kept in one table of a SQL server. */
final class JdbcStore extends AbstractStore {
  private final SqlServer server;
  private final Dialect dialect;
  private final JdbcSettings settings;
  private final Keyspaces keyspaces; // shared by the store and its keyspace handles
  private final String table; // this store's or keyspace's
  private final String quoted;

  private JdbcStore(StoreInfo info, SqlServer server) {
    super(info);
    this.server = server;
    this.dialect = server.dialect;
    this.settings = server.settings;
    this.keyspaces = new Keyspaces(dialect, settings.table());
    this.table = settings.table();
    this.quoted = dialect.quote(table);
  }

  /** A keyspace handle: the store's server, its own table. */
  private JdbcStore(JdbcStore store, String name, String table) {
    super(store, name);
    this.server = store.server;
    this.dialect = store.dialect;
    this.settings = store.settings;
    this.keyspaces = store.keyspaces;
    this.table = table;
    this.quoted = dialect.quote(table);
  }

  static JdbcStore open(Dialect d, StoreConfig config, JdbcSettings s, Limits limits) {
    return open(d, config, s, limits, true);
  }

  /**
   * Opens the store; {@code exclusive=false} skips the table lock. Only tests use that: a second
   * session writing the table, as another application instance or a foreign SQL client would, to
   * check that conditional writes are atomic across sessions and processes.
   */
  static JdbcStore open(
      Dialect d, StoreConfig config, JdbcSettings s, Limits limits, boolean exclusive) {
    SqlServer server = SqlServer.open(d, config, s, exclusive);
    StoreInfo info =
        new StoreInfo(
            d.id(),
            JdbcProvider.FEATURES,
            limits,
            config.durability(),
            server.location,
            config.readOnly());
    JdbcStore store = new JdbcStore(info, server);
    if (exclusive && !config.readOnly()) {
      try (Connection c = server.pool.getConnection()) {
        store.keyspaces.recover(c);
      } catch (SQLException | RuntimeException e) {
        server.close();
        throw new StoreIOException(
            info.describe()
                + ": settling keyspaces a crash left half created or dropped failed: "
                + e.getMessage(),
            e);
      }
    }
    return store;
  }

  // ------------------------------------------------------------------------------ operations

  @FunctionalInterface
  interface SqlWork<T> {
    T run(Connection c) throws SQLException;
  }

  /**
   * Runs work on a pooled connection; on a lost connection (server restart, network) or a
   * transaction the server rolled back for a conflict (deadlock), retries on a fresh one until
   * retry-timeout. Every operation here is idempotent (upserts, deletes, whole batches), so a retry
   * after an unknown commit outcome is safe.
   */
  <T> T run(String op, SqlWork<T> work) {
    long deadline =
        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(settings.retryTimeoutMillis());
    int attempt = 0;
    while (true) {
      checkOpen();
      try (Connection c = server.pool.getConnection()) {
        return work.run(c);
      } catch (SQLException e) {
        if (isClosed()) {
          checkOpen();
        }
        if (!(dialect.isConnectionLoss(e) || isTransactionConflict(e))
            || System.nanoTime() - deadline > 0) {
          throw failure(op, e);
        }
        server.retries.incrementAndGet();
        SqlServer.pause(Math.min(1000, 25L << Math.min(attempt++, 6)));
      }
    }
  }

  /**
   * Whether the server rolled the transaction back because it conflicted with a concurrent one
   * (SQLSTATE class 40: MySQL/MariaDB's deadlock 1213 is 40001, PostgreSQL's 40P01 and 40001):
   * concurrent batches over neighbouring keys meet InnoDB's gap locks, and the whole batch can
   * simply run again.
   */
  private static boolean isTransactionConflict(SQLException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException s
          && s.getSQLState() != null
          && s.getSQLState().startsWith("40")) {
        return true;
      }
    }
    return false;
  }

  StoreIOException failure(String op, Exception e) {
    return new StoreIOException(
        info().describe() + ": " + op + " failed on " + settings.address() + ": " + e.getMessage(),
        e);
  }

  private void checkLock() {
    server.checkLock(info().describe());
  }

  @Override
  protected byte[] doGet(byte[] key) {
    return run(
        "get",
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement("SELECT v FROM " + quoted + " WHERE k = ?")) {
            ps.setBytes(1, key);
            try (ResultSet rs = ps.executeQuery()) {
              return rs.next() ? rs.getBytes(1) : null;
            }
          }
        });
  }

  @Override
  protected void doPut(byte[] key, byte[] value) {
    checkLock();
    run(
        "put",
        c -> {
          try (PreparedStatement ps = c.prepareStatement(dialect.upsert(table))) {
            ps.setBytes(1, key);
            ps.setBytes(2, value);
            return ps.executeUpdate();
          }
        });
  }

  @Override
  protected void doDelete(byte[] key) {
    checkLock();
    run(
        "delete",
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement("DELETE FROM " + quoted + " WHERE k = ?")) {
            ps.setBytes(1, key);
            return ps.executeUpdate();
          }
        });
  }

  /**
   * One transaction over every table the batch touches (the store's and its keyspaces'), so a batch
   * spanning keyspaces commits atomically. Keyspaces the batch names that do not exist yet are
   * created first, each in its own step: if the batch then fails they stay, empty.
   */
  @Override
  protected void doWrite(WriteBatch batch) {
    checkLock();
    // The last operation on a key decides its final state: one delete or upsert per key and table.
    Map<String, Map<ByteBuffer, byte[]>> byKeyspace = new LinkedHashMap<>();
    for (int i = 0, n = batch.size(); i < n; i++) {
      Map<ByteBuffer, byte[]> last =
          byKeyspace.computeIfAbsent(keyspaceOf(batch, i), k -> new LinkedHashMap<>());
      ByteBuffer k = ByteBuffer.wrap(batch.key(i));
      last.remove(k);
      last.put(k, batch.isDelete(i) ? null : batch.value(i));
    }
    while (true) {
      Map<String, String> tables = new HashMap<>();
      for (String ks : byKeyspace.keySet()) {
        tables.put(ks, tableOf(ks));
      }
      keyspaces.lock.readLock().lock(); // no keyspace is dropped while the batch runs
      try {
        if (stillListed(tables)) {
          run(
              "batch of " + batch.size() + " operations",
              c -> {
                applyBatch(c, byKeyspace, tables);
                return null;
              });
          return;
        }
      } finally {
        keyspaces.lock.readLock().unlock();
      }
      // A keyspace was dropped between its lookup and the batch: look it up (create it) again.
    }
  }

  /** The table of the store's own keys (null) or of a named keyspace, created if absent. */
  private String tableOf(String keyspace) {
    if (keyspace == null) {
      return settings.table();
    }
    if (keyspace.equals(keyspaceName())) {
      return table;
    }
    String t = keyspaces.cached(keyspace);
    return t != null
        ? t
        : run("create keyspace " + keyspace, c -> keyspaces.table(c, keyspace, true));
  }

  private boolean stillListed(Map<String, String> tables) {
    for (Map.Entry<String, String> e : tables.entrySet()) {
      String ks = e.getKey();
      if (ks != null && !ks.equals(keyspaceName()) && !e.getValue().equals(keyspaces.cached(ks))) {
        return false;
      }
    }
    return true;
  }

  private void applyBatch(
      Connection c, Map<String, Map<ByteBuffer, byte[]>> byKeyspace, Map<String, String> tables)
      throws SQLException {
    c.setAutoCommit(false);
    try {
      for (Map.Entry<String, Map<ByteBuffer, byte[]>> ks : byKeyspace.entrySet()) {
        String t = tables.get(ks.getKey());
        try (PreparedStatement del =
                c.prepareStatement("DELETE FROM " + dialect.quote(t) + " WHERE k = ?");
            PreparedStatement up = c.prepareStatement(dialect.upsert(t))) {
          int dels = 0;
          int ups = 0;
          for (Map.Entry<ByteBuffer, byte[]> e : ks.getValue().entrySet()) {
            byte[] k = e.getKey().array();
            if (e.getValue() == null) {
              del.setBytes(1, k);
              del.addBatch();
              dels++;
            } else {
              up.setBytes(1, k);
              up.setBytes(2, e.getValue());
              up.addBatch();
              ups++;
            }
          }
          if (dels > 0) {
            del.executeBatch();
          }
          if (ups > 0) {
            up.executeBatch();
          }
        }
      }
      c.commit();
    } catch (SQLException | RuntimeException e) {
      SqlServer.rollbackQuietly(c);
      throw e;
    } finally {
      c.setAutoCommit(true);
    }
  }

  @Override
  protected AbstractStore doKeyspace(String name) {
    boolean create = !info().readOnly();
    String t = run("open keyspace " + name, c -> keyspaces.table(c, name, create));
    if (t == null) {
      throw new IllegalStateException(
          info().describe() + ": keyspace '" + name + "' is not in catalog " + keyspaces.catalog());
    }
    return new JdbcStore(this, name, t);
  }

  @Override
  protected List<String> doKeyspaces() {
    return run("list keyspaces", keyspaces::names);
  }

  @Override
  protected boolean doDropKeyspace(String name) {
    checkLock();
    return run("drop keyspace " + name, c -> keyspaces.drop(c, name));
  }

  @Override
  protected AbstractCursor doScan(KeyRange range) {
    List<byte[]> params = new ArrayList<>();
    String q = rangeQuery(range, null, range.limitValue(), params);
    long deadline =
        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(settings.retryTimeoutMillis());
    int attempt = 0;
    while (true) {
      checkOpen();
      Connection c = null;
      PreparedStatement ps = null;
      try {
        c = server.pool.getConnection();
        c.setAutoCommit(false); // PostgreSQL streams with a fetch size only inside a transaction
        c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        c.setReadOnly(true);
        ps = c.prepareStatement(q, ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY);
        ps.setFetchSize(settings.fetchSize());
        for (int i = 0; i < params.size(); i++) {
          ps.setBytes(i + 1, params.get(i));
        }
        ResultSet rs = ps.executeQuery();
        return new JdbcCursor(this, range, c, ps, rs, settings.fetchSize());
      } catch (SQLException e) {
        SqlServer.closeQuietly(ps);
        if (c != null) {
          SqlServer.rollbackQuietly(c);
          SqlServer.closeQuietly(c);
        }
        if (!dialect.isConnectionLoss(e) || System.nanoTime() - deadline > 0) {
          throw failure("scan " + range, e);
        }
        server.retries.incrementAndGet();
        SqlServer.pause(Math.min(1000, 25L << Math.min(attempt++, 6)));
      }
    }
  }

  /** {@link TableReads#rangeQuery} on this store's (or keyspace's) table. */
  String rangeQuery(KeyRange range, byte[] after, long limit, List<byte[]> params) {
    return TableReads.rangeQuery(quoted, range, after, limit, params);
  }

  @Override
  protected List<byte[]> doGetAll(List<byte[]> keys) {
    return run("getAll of " + keys.size() + " keys", c -> readMany(c, keys, true));
  }

  /** {@link TableReads#readMany} on this store's (or keyspace's) table. */
  List<byte[]> readMany(Connection c, List<byte[]> keys, boolean ownTransaction)
      throws SQLException {
    return TableReads.readMany(c, quoted, keys, ownTransaction);
  }

  /**
   * One conditional statement in autocommit, so the server decides atomically against every other
   * session (this store's other pooled connections, other processes): {@code INSERT} that yields to
   * an existing key, or {@code UPDATE}/{@code DELETE ... WHERE k = ? AND v = ?}, whose WHERE
   * PostgreSQL and InnoDB evaluate on the latest committed row under its row lock. The answer is
   * the statement's row count (MySQL: rows matched, not changed; see {@link MysqlDialect}).
   */
  @Override
  protected boolean doCompareAndSet(byte[] key, byte[] expected, byte[] value) {
    checkLock();
    String op =
        expected == null ? "putIfAbsent" : value == null ? "delete(key, expected)" : "replace";
    return runOnce(
        op,
        c -> {
          if (expected == null) {
            return dialect.insertIfAbsent(c, table, key, value);
          }
          String sql =
              value == null
                  ? "DELETE FROM " + quoted + " WHERE k = ? AND v = ?"
                  : "UPDATE " + quoted + " SET v = ? WHERE k = ? AND v = ?";
          try (PreparedStatement ps = c.prepareStatement(sql)) {
            int i = 1;
            if (value != null) {
              ps.setBytes(i++, value);
            }
            ps.setBytes(i++, key);
            ps.setBytes(i, expected);
            return ps.executeUpdate() == 1;
          }
        });
  }

  /**
   * Like {@link #run} for a statement that must not run twice: a conditional write whose reply was
   * lost may have committed, and running it again would answer false for a write that was done (a
   * counter loop would then add twice). Retries only while no connection can be had; a connection
   * lost during the statement fails with the outcome unknown.
   */
  <T> T runOnce(String op, SqlWork<T> work) {
    long deadline =
        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(settings.retryTimeoutMillis());
    int attempt = 0;
    while (true) {
      checkOpen();
      Connection c;
      try {
        c = server.pool.getConnection();
      } catch (SQLException e) {
        if (isClosed()) {
          checkOpen();
        }
        if (!dialect.isConnectionLoss(e) || System.nanoTime() - deadline > 0) {
          throw failure(op, e);
        }
        server.retries.incrementAndGet();
        SqlServer.pause(Math.min(1000, 25L << Math.min(attempt++, 6)));
        continue;
      }
      try (c) {
        return work.run(c);
      } catch (SQLException e) {
        if (isClosed()) {
          checkOpen();
        }
        if (dialect.isConnectionLoss(e)) {
          throw new StoreIOException(
              info().describe()
                  + ": "
                  + op
                  + " lost its connection to "
                  + settings.address()
                  + " while running; whether it was applied is unknown (read the key to find"
                  + " out): "
                  + e.getMessage(),
              e);
        }
        throw failure(op, e);
      }
    }
  }

  /**
   * A snapshot: a read-only repeatable-read transaction on a connection of its own, outside the
   * pool, so open snapshots never starve the store's operations of pooled connections.
   */
  @Override
  protected AbstractSnapshot doSnapshot() {
    Connection c = null;
    try {
      c = server.connect();
      dialect.beginSnapshot(c);
      JdbcSnapshot snap = new JdbcSnapshot(this, c, settings.fetchSize());
      c = null;
      return snap;
    } catch (SQLException e) {
      throw failure("snapshot", e);
    } finally {
      SqlServer.closeQuietly(c);
    }
  }

  @Override
  protected void doSync() {
    run(
        "sync",
        c -> {
          dialect.sync(c);
          return null;
        });
  }

  @Override
  protected void doCompact() {
    run(
        "compact",
        c -> {
          dialect.compact(c, table);
          return null;
        });
  }

  @Override
  protected StoreStats doStats() {
    return run(
        "stats",
        c -> {
          long count = Dialect.queryLong(c, "SELECT COUNT(*) FROM " + quoted);
          long bytes = dialect.tableBytes(c, table);
          Map<String, Number> figures = new LinkedHashMap<>();
          server.figures(figures);
          return new StoreStats(count, true, bytes, figures);
        });
  }

  @Override
  protected void doClose() {
    if (keyspaceName() == null) {
      server.close(); // a keyspace handle holds nothing of its own
    }
  }
}
