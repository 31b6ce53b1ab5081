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
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * A store kept in one table of a SQL server (a keyspace: in a table of its own, see {@link
 * Keyspaces}). Each operation is one call on a pooled connection ({@link Calls}), retried as its
 * kind allows.
 */
final class JdbcStore extends AbstractStore {
  private final SqlServer server;
  private final Dialect dialect;
  private final JdbcSettings settings;
  private final Keyspaces keyspaces; // shared by the store and its keyspace handles
  private final String table; // this store's or keyspace's
  private final String quoted;
  final Calls calls; // this handle's, on the server

  private JdbcStore(StoreInfo info, SqlServer server) {
    super(info);
    this.server = server;
    this.dialect = server.dialect;
    this.settings = server.settings;
    this.keyspaces = new Keyspaces(dialect, settings.table());
    this.table = settings.table();
    this.quoted = dialect.quote(table);
    this.calls = new Calls(server, info(), this::checkOpen);
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
    this.calls = new Calls(server, info(), this::checkOpen);
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

  private void checkLock() {
    server.checkLock(info().describe());
  }

  @Override
  protected byte[] doGet(byte[] key) {
    return calls.run(
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
    calls.run(
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
    calls.run(
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
    Map<String, Map<ByteBuffer, byte[]>> byKeyspace = lastOperations(batch);
    withTables(
        byKeyspace.keySet(),
        Set.of(),
        tables ->
            calls.run(
                "batch of " + batch.size() + " operations",
                c -> {
                  Map<String, Map<ByteBuffer, byte[]>> byTable = new LinkedHashMap<>();
                  byKeyspace.forEach((ks, ops) -> byTable.put(tables.get(ks), ops));
                  c.setAutoCommit(false);
                  try {
                    TableWrites.apply(c, dialect, byTable);
                    c.commit();
                  } catch (SQLException | RuntimeException e) {
                    SqlServer.rollbackQuietly(c);
                    throw e;
                  } finally {
                    c.setAutoCommit(true);
                  }
                  return null;
                }));
  }

  /**
   * One transaction that locks and checks every condition key, then applies the operations (see
   * {@link ConditionalBatch}): atomic against every other session writing the tables, other store
   * objects and processes included. Keyspaces the operations name are created first, as for {@link
   * #doWrite}, and stay (empty) when a condition fails; keyspaces only conditions name are never
   * created (an absent keyspace holds no key; its name is locked in the catalog until the commit).
   * Run once: a deadlock or a connection lost before the commit rolled the transaction back, and it
   * runs again; a connection lost during the commit fails with the outcome unknown.
   */
  @Override
  protected boolean doWriteIf(WriteBatch batch) {
    checkLock();
    Map<String, Map<ByteBuffer, byte[]>> byKeyspace = lastOperations(batch);
    Map<String, TreeMap<ByteBuffer, List<byte[]>>> conditions = new HashMap<>();
    for (int i = 0, n = batch.conditionCount(); i < n; i++) {
      conditions
          .computeIfAbsent(
              conditionKeyspaceOf(batch, i), k -> new TreeMap<>(ConditionalBatch.KEY_ORDER))
          .computeIfAbsent(ByteBuffer.wrap(batch.conditionKey(i)), k -> new ArrayList<>())
          .add(batch.conditionValue(i));
    }
    return withTables(
        byKeyspace.keySet(),
        conditions.keySet(),
        tables ->
            calls.runOnce(
                "conditional batch of "
                    + batch.conditionCount()
                    + " conditions and "
                    + batch.size()
                    + " operations",
                new ConditionalBatch(dialect, keyspaces, tables, conditions, byKeyspace)::run));
  }

  /** Per keyspace the batch names, per key: the last operation's value (null: delete). */
  private Map<String, Map<ByteBuffer, byte[]>> lastOperations(WriteBatch batch) {
    // The last operation on a key decides its final state: one delete or upsert per key and table.
    Map<String, Map<ByteBuffer, byte[]>> byKeyspace = new LinkedHashMap<>();
    for (int i = 0, n = batch.size(); i < n; i++) {
      Map<ByteBuffer, byte[]> last =
          byKeyspace.computeIfAbsent(keyspaceOf(batch, i), k -> new LinkedHashMap<>());
      ByteBuffer k = ByteBuffer.wrap(batch.key(i));
      last.remove(k);
      last.put(k, batch.isDelete(i) ? null : batch.value(i));
    }
    return byKeyspace;
  }

  /**
   * Resolves the tables of keyspaces, {@code create}d when absent or only {@code lookUp}ed (null
   * when absent), and runs work with them while no keyspace of this store object is created or
   * dropped; resolves them again when one was dropped in between.
   */
  private <T> T withTables(
      Set<String> create, Set<String> lookUp, Function<Map<String, String>, T> work) {
    while (true) {
      Map<String, String> tables = new HashMap<>();
      for (String ks : create) {
        tables.put(ks, tableOf(ks, true));
      }
      for (String ks : lookUp) {
        if (!tables.containsKey(ks)) {
          tables.put(ks, tableOf(ks, false));
        }
      }
      keyspaces.lock.readLock().lock(); // no keyspace is dropped while the batch runs
      try {
        if (stillListed(tables)) {
          return work.apply(tables);
        }
      } finally {
        keyspaces.lock.readLock().unlock();
      }
      // A keyspace was dropped (or created) between its lookup and the batch: look it up again.
    }
  }

  /**
   * The table of the store's own keys (null) or of a named keyspace, created if absent and {@code
   * create}, else null when absent.
   */
  private String tableOf(String keyspace, boolean create) {
    if (keyspace == null) {
      return settings.table();
    }
    if (keyspace.equals(keyspaceName())) {
      return table;
    }
    String t = keyspaces.cached(keyspace);
    return t != null
        ? t
        : calls.run(
            (create ? "create keyspace " : "look up keyspace ") + keyspace,
            c -> keyspaces.table(c, keyspace, create));
  }

  private boolean stillListed(Map<String, String> tables) {
    for (Map.Entry<String, String> e : tables.entrySet()) {
      String ks = e.getKey();
      if (ks != null
          && !ks.equals(keyspaceName())
          && !Objects.equals(e.getValue(), keyspaces.cached(ks))) {
        return false;
      }
    }
    return true;
  }

  @Override
  protected AbstractStore doKeyspace(String name) {
    boolean create = !info().readOnly();
    String t = calls.run("open keyspace " + name, c -> keyspaces.table(c, name, create));
    if (t == null) {
      throw new IllegalStateException(
          info().describe() + ": keyspace '" + name + "' is not in catalog " + keyspaces.catalog());
    }
    return new JdbcStore(this, name, t);
  }

  @Override
  protected List<String> doKeyspaces() {
    return calls.run("list keyspaces", keyspaces::names);
  }

  @Override
  protected boolean doDropKeyspace(String name) {
    checkLock();
    return calls.run("drop keyspace " + name, c -> keyspaces.drop(c, name));
  }

  @Override
  protected AbstractCursor doScan(KeyRange range) {
    List<byte[]> params = new ArrayList<>();
    String q = rangeQuery(range, null, range.limitValue(), params);
    int fetchSize = settings.fetchSize();
    return calls.stream(
        "scan " + range,
        q,
        params,
        fetchSize,
        (c, ps, rs) -> new JdbcCursor(this, range, c, ps, rs, fetchSize));
  }

  /** {@link TableReads#rangeQuery} on this store's (or keyspace's) table. */
  String rangeQuery(KeyRange range, byte[] after, long limit, List<byte[]> params) {
    return TableReads.rangeQuery(quoted, range, after, limit, params);
  }

  @Override
  protected List<byte[]> doGetAll(List<byte[]> keys) {
    return calls.run("getAll of " + keys.size() + " keys", c -> readMany(c, keys, true));
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
    return calls.runOnce(
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
      throw calls.failure("snapshot", e);
    } finally {
      SqlServer.closeQuietly(c);
    }
  }

  @Override
  protected void doSync() {
    calls.run(
        "sync",
        c -> {
          dialect.sync(c);
          return null;
        });
  }

  @Override
  protected void doCompact() {
    calls.run(
        "compact",
        c -> {
          dialect.compact(c, table);
          return null;
        });
  }

  @Override
  protected StoreStats doStats() {
    return calls.run(
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
