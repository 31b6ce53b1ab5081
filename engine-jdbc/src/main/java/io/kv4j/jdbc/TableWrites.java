package io.kv4j.jdbc;

import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Map;
import java.util.TreeMap;

/** The writes of a batch, shared by plain and conditional batches. */
final class TableWrites {
  private TableWrites() {}

  /**
   * Applies each table's final operations (a value: upsert; null: delete) on a connection inside
   * the caller's transaction, deletes and upserts each sent as one JDBC batch per table (PostgreSQL
   * rewrites batched inserts into multi-row statements).
   *
   * <p>Isolation: a batch must take effect at one instant, so it holds a lock on every key it
   * writes before its first change can meet another session's. An upsert locks its row (inserted or
   * found); where a {@code DELETE} of an absent key locks nothing ({@link
   * Dialect#deleteLocksAbsentKey}: PostgreSQL), each deleted key is first upserted with an empty
   * placeholder value, in the same statement as the batch's upserts, and then deleted: otherwise a
   * concurrent batch could insert that key and commit between this batch's delete and its other
   * writes, and the two batches would fit no order (one's delete before the other, its put after).
   * Keys are written in one order (tables by name, keys unsigned, as {@link ConditionalBatch} locks
   * them), so two batches sharing keys do not wait for each other in a cycle.
   *
   * @param byTable table name to key to value (null: delete), one entry per key
   */
  static void apply(Connection c, Dialect d, Map<String, ? extends Map<ByteBuffer, byte[]>> byTable)
      throws SQLException {
    Map<String, Map<ByteBuffer, byte[]>> ordered = new TreeMap<>();
    for (Map.Entry<String, ? extends Map<ByteBuffer, byte[]>> table : byTable.entrySet()) {
      Map<ByteBuffer, byte[]> ops = new TreeMap<>(ConditionalBatch.KEY_ORDER);
      ops.putAll(table.getValue());
      ordered.put(table.getKey(), ops);
    }
    boolean lockDeletes = !d.deleteLocksAbsentKey();
    for (Map.Entry<String, Map<ByteBuffer, byte[]>> table : ordered.entrySet()) {
      String t = table.getKey();
      try (PreparedStatement del =
              c.prepareStatement("DELETE FROM " + d.quote(t) + " WHERE k = ?");
          PreparedStatement up = c.prepareStatement(d.upsert(t))) {
        int dels = 0;
        int ups = 0;
        for (Map.Entry<ByteBuffer, byte[]> e : table.getValue().entrySet()) {
          byte[] k = e.getKey().array();
          if (e.getValue() == null) {
            del.setBytes(1, k);
            del.addBatch();
            dels++;
          }
          if (e.getValue() != null || lockDeletes) {
            up.setBytes(1, k);
            up.setBytes(2, e.getValue() == null ? PLACEHOLDER : e.getValue());
            up.addBatch();
            ups++;
          }
        }
        if (lockDeletes) {
          if (ups > 0) {
            up.executeBatch(); // locks every key, the deleted ones through their placeholder
          }
          if (dels > 0) {
            del.executeBatch();
          }
        } else {
          if (dels > 0) {
            del.executeBatch();
          }
          if (ups > 0) {
            up.executeBatch();
          }
        }
      }
    }
  }

  /** The value of a placeholder row, never committed: the batch deletes it before its commit. */
  private static final byte[] PLACEHOLDER = new byte[0];
}
