package io.kv4j.jdbc;

import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransactionRollbackException;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One {@code writeIf} on the server (see {@link JdbcStore#doWriteIf}): one transaction that locks
 * and reads every condition key in one fixed order, compares the values byte for byte, applies the
 * operations and commits, or rolls back as soon as a condition fails.
 *
 * <p>Why nothing falls between the check and the apply: every condition key is locked by the read
 * that checks it ({@link Dialect#lockForCondition}: a present row by {@code SELECT ... FOR UPDATE},
 * an absent key by a placeholder row on PostgreSQL, by InnoDB's gap lock on MySQL/MariaDB) and the
 * lock is held until the commit; every other write of that key by any session, plain puts and
 * foreign SQL clients included, needs a conflicting lock and waits. Keys are locked in one order
 * (table name, then unsigned key bytes), so two conditional batches never wait for each other in a
 * cycle over their condition keys; a deadlock the server reports anyway (operations on keys that
 * are not conditions, InnoDB's shared gaps) rolls the whole transaction back, and it runs again.
 */
final class ConditionalBatch {
  /** Keys in unsigned byte order: the order every conditional batch locks them in. */
  static final Comparator<ByteBuffer> KEY_ORDER =
      (a, b) -> Arrays.compareUnsigned(a.array(), b.array());

  private final Dialect dialect;
  private final Keyspaces keyspaces;
  private final Map<String, String> tables; // keyspace (null: the store's) to table; null: absent
  private final Map<String, TreeMap<ByteBuffer, List<byte[]>>> conditions; // expected; null: absent
  private final Map<String, Map<ByteBuffer, byte[]>> operations; // final value; null: delete

  /**
   * @param tables the table of every keyspace the batch names, operations' keyspaces created; null
   *     for a keyspace only conditions name and that did not exist when looked up
   * @param conditions per keyspace, per key: the values the conditions expect (null: absent)
   * @param operations per keyspace, per key: the last operation's value (null: delete)
   */
  ConditionalBatch(
      Dialect dialect,
      Keyspaces keyspaces,
      Map<String, String> tables,
      Map<String, TreeMap<ByteBuffer, List<byte[]>>> conditions,
      Map<String, Map<ByteBuffer, byte[]>> operations) {
    this.dialect = dialect;
    this.keyspaces = keyspaces;
    this.tables = tables;
    this.conditions = conditions;
    this.operations = operations;
  }

  /**
   * Runs the batch on a pooled connection. A connection lost before the commit was sent is reported
   * as a rolled-back transaction (SQLSTATE 40000, the loss as its cause): the server ends a dead
   * session's transaction without committing it, so the batch may run again; a loss during the
   * commit is reported as it is (the outcome is unknown).
   *
   * @return true when every condition held and the operations committed
   */
  boolean run(Connection c) throws SQLException {
    if (tables.containsValue(null)) {
      keyspaces.ensureCatalog(c);
    }
    int isolation = c.getTransactionIsolation();
    c.setTransactionIsolation(dialect.conditionIsolation());
    c.setAutoCommit(false);
    try {
      boolean held;
      try {
        held = checkAndApply(c);
      } catch (SQLException e) {
        SqlServer.rollbackQuietly(c);
        if (dialect.isConnectionLoss(e)) {
          throw new SQLTransactionRollbackException(
              "connection lost before the commit, transaction not applied: " + e.getMessage(),
              "40000",
              e);
        }
        throw e;
      }
      if (!held) {
        // A failed rollback means a dead session, whose transaction the server discards.
        SqlServer.rollbackQuietly(c);
        return false;
      }
      c.commit();
      return true;
    } catch (RuntimeException e) {
      SqlServer.rollbackQuietly(c);
      throw e;
    } finally {
      try {
        c.setAutoCommit(true);
        c.setTransactionIsolation(isolation);
      } catch (SQLException ignored) {
        // A broken connection: the pool discards it (and resets a live one's state on return).
      }
    }
  }

  /** Inside the transaction: locks and checks the conditions, then writes; false on a failure. */
  private boolean checkAndApply(Connection c) throws SQLException {
    // Keyspaces absent when looked up: lock their names in the catalog before any row (so no
    // other session creates them until the commit), then look again.
    Map<String, String> resolved = new HashMap<>(tables);
    for (String ks : conditions.keySet()) {
      if (resolved.get(ks) == null) {
        resolved.put(ks, keyspaces.lockedTable(c, ks));
      }
    }
    TreeMap<String, TreeMap<ByteBuffer, List<byte[]>>> locks = new TreeMap<>();
    for (Map.Entry<String, TreeMap<ByteBuffer, List<byte[]>>> e : conditions.entrySet()) {
      String t = resolved.get(e.getKey());
      if (t != null) {
        locks.put(t, e.getValue());
        continue;
      }
      for (List<byte[]> expected : e.getValue().values()) {
        for (byte[] v : expected) {
          if (v != null) {
            return false; // an absent keyspace holds no key
          }
        }
      }
    }
    Map<String, Map<ByteBuffer, byte[]>> writes = new TreeMap<>();
    for (Map.Entry<String, Map<ByteBuffer, byte[]>> e : operations.entrySet()) {
      Map<ByteBuffer, byte[]> ops = new TreeMap<>(KEY_ORDER);
      ops.putAll(e.getValue());
      writes.put(resolved.get(e.getKey()), ops);
    }
    for (Map.Entry<String, TreeMap<ByteBuffer, List<byte[]>>> t : locks.entrySet()) {
      for (Map.Entry<ByteBuffer, List<byte[]>> k : t.getValue().entrySet()) {
        Dialect.ConditionRow row = dialect.lockForCondition(c, t.getKey(), k.getKey().array());
        for (byte[] expected : k.getValue()) {
          if (!Arrays.equals(row.value(), expected)) {
            return false;
          }
        }
        if (row.placeholder()) {
          // Delete the placeholder unless the batch writes the key (its upsert replaces it).
          Map<ByteBuffer, byte[]> ops =
              writes.computeIfAbsent(t.getKey(), x -> new TreeMap<>(KEY_ORDER));
          if (!ops.containsKey(k.getKey())) {
            ops.put(k.getKey(), null);
          }
        }
      }
    }
    TableWrites.apply(c, dialect, writes);
    return true;
  }
}
