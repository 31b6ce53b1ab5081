package io.kv4j.jdbc;

import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Map;

/** The writes of a batch, shared by plain and conditional batches. */
final class TableWrites {
  private TableWrites() {}

  /**
   * Applies each table's final operations (a value: upsert; null: delete) on a connection inside
   * the caller's transaction, deletes and upserts each sent as one JDBC batch per table (PostgreSQL
   * rewrites batched inserts into multi-row statements).
   *
   * @param byTable table name to key to value (null: delete), one entry per key
   */
  static void apply(Connection c, Dialect d, Map<String, ? extends Map<ByteBuffer, byte[]>> byTable)
      throws SQLException {
    for (Map.Entry<String, ? extends Map<ByteBuffer, byte[]>> table : byTable.entrySet()) {
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
  }
}
