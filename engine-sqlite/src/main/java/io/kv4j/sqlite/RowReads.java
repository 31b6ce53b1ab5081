package io.kv4j.sqlite;

import io.kv4j.StoreCorruptedException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reading rows: gets and getAlls on any connection, each row checked against its {@link
 * RowChecksum} (in a checksummed table) and against the keys asked for. {@code where} (the store's
 * description) and {@code file} name the store in messages.
 */
final class RowReads {
  private RowReads() {}

  /**
   * Reads one key of a table on a connection: a pooled reader, a snapshot's (inside its read
   * transaction) or the writer (inside a conditional write's transaction). Checks the row's
   * checksum against the key asked for.
   */
  static byte[] get(SqlConn c, Sql sql, byte[] key, String where, Path file) throws SQLException {
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
        checkRow(sql, key, v, rs.getInt(2), where, file);
      }
      return v;
    }
  }

  /**
   * {@link SqliteStore#doGetAll} on a given connection. Statements come in sizes that are powers of
   * two (the last chunk is padded by repeating its last key), so a connection caches at most
   * {@value Sql#GET_ALL_SIZES} of them. Each row's key must be one the chunk asked for and come
   * once, and its checksum is checked against that key: a damaged key index that leads to another
   * key's row fails here as in a get.
   */
  static List<byte[]> getAll(SqlConn c, Sql sql, List<byte[]> keys, String where, Path file)
      throws SQLException {
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
                where
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
            checkRow(sql, k, v, rs.getInt(3), where, file);
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
  static void checkRow(Sql sql, byte[] key, byte[] value, int stored, String where, Path file) {
    int computed = RowChecksum.of(key, value);
    if (computed != stored) {
      throw new StoreCorruptedException(
          where
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
}
