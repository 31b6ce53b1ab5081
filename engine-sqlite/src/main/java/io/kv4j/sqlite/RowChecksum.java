package io.kv4j.sqlite;

import java.util.zip.CRC32C;

/**
 * kv4j's checksum over one row of a checksummed table: a CRC32C over the key and the value, kept in
 * the row's {@value #COLUMN} column. SQLite checks no page or row contents by itself, so without it
 * a flipped bit in a page reads back as a wrong value, and a flipped bit in a B-tree cell (the
 * rowid in a key-index entry, a cell pointer) makes a lookup land on another key's row.
 *
 * <p>Row format of a checksummed table (one SQLite record per row; SQLite encodes the columns, kv4j
 * adds the third):
 *
 * <table>
 *   <caption>columns of a checksummed row</caption>
 *   <tr><th>column</th><th>SQLite type</th><th>content</th></tr>
 *   <tr><td>{@code k}</td><td>BLOB, 1 B – 64 KiB</td><td>the key, unchanged</td></tr>
 *   <tr><td>{@code v}</td><td>BLOB, 0 B – 256 MiB</td><td>the value, unchanged</td></tr>
 *   <tr><td>{@value #COLUMN}</td><td>INTEGER, −2<sup>31</sup> … 2<sup>31</sup>−1</td>
 *       <td>CRC32C (Castagnoli) of the byte string below, stored as a signed 32-bit integer (the
 *       low 32 bits of {@link CRC32C#getValue()} cast to {@code int}); SQLite stores it in 1–4
 *       bytes</td></tr>
 * </table>
 *
 * <p>The checksummed byte string:
 *
 * <table>
 *   <caption>bytes covered by the row checksum</caption>
 *   <tr><th>offset</th><th>width</th><th>field</th></tr>
 *   <tr><td>0</td><td>4</td><td>key length {@code n}, unsigned, big-endian</td></tr>
 *   <tr><td>4</td><td>{@code n}</td><td>the key bytes</td></tr>
 *   <tr><td>4 + {@code n}</td><td>{@code m}</td><td>the value bytes ({@code m} = the value's
 *       length; nothing follows)</td></tr>
 * </table>
 *
 * <p>Why these bytes: the key is covered so that a row reached through a damaged index (whose rowid
 * points at another key's row) fails the check against the key that was asked for, and so that a
 * flipped bit in a stored key fails when a scan reads it. The key length is covered so that moving
 * the boundary between key and value (a damaged record header) changes the checksum too. The value
 * stays a plain BLOB, so every SQLite tool reads values unchanged, and the declared value limit
 * (256 MiB) needs no room for a frame. The column's presence in the table's schema is what marks a
 * table as checksummed: the marker travels with the file.
 */
final class RowChecksum {
  /** The name of the checksum column. */
  static final String COLUMN = "crc32c";

  private RowChecksum() {}

  /**
   * The row checksum of a key and value.
   *
   * @param key the key
   * @param value the value
   * @return the CRC32C of the byte string in the class comment, as a signed int
   */
  static int of(byte[] key, byte[] value) {
    CRC32C crc = new CRC32C();
    int n = key.length;
    crc.update(n >>> 24);
    crc.update(n >>> 16);
    crc.update(n >>> 8);
    crc.update(n);
    crc.update(key, 0, n);
    crc.update(value, 0, value.length);
    return (int) crc.getValue();
  }
}
