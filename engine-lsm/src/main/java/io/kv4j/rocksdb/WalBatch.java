package io.kv4j.rocksdb;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The operations of a RocksDB write batch, the payload of a WAL's logical record (RocksDB {@code
 * db/write_batch.cc}).
 *
 * <table>
 *   <caption>write batch, little-endian</caption>
 *   <tr><th>offset</th><th>width</th><th>field</th></tr>
 *   <tr><td>0</td><td>8</td><td>sequence number of the first operation</td></tr>
 *   <tr><td>8</td><td>4</td><td>number of operations</td></tr>
 *   <tr><td>12</td><td>...</td><td>records: a type byte, then its fields; a field is a varint32
 *       length and that many bytes, a column family id a varint32</td></tr>
 * </table>
 *
 * <table>
 *   <caption>record types read here</caption>
 *   <tr><th>type</th><th>fields</th><th>meaning</th></tr>
 *   <tr><td>0x1</td><td>key, value</td><td>put, default column family</td></tr>
 *   <tr><td>0x0 / 0x7</td><td>key</td><td>delete / single delete, default column family</td></tr>
 *   <tr><td>0x5</td><td>cf id, key, value</td><td>put</td></tr>
 *   <tr><td>0x4 / 0x8</td><td>cf id, key</td><td>delete / single delete</td></tr>
 *   <tr><td>0x3</td><td>blob</td><td>log data, no sequence number</td></tr>
 *   <tr><td>0xD</td><td></td><td>no-op, no sequence number</td></tr>
 * </table>
 *
 * <p>Every operation takes the next sequence number. Other types (merge, range deletion,
 * transactions, wide columns, timestamps) are refused: what they changed cannot be told here.
 */
final class WalBatch {
  private WalBatch() {}

  /** Receives the operations of a batch in order. */
  @FunctionalInterface
  interface Ops {
    /**
     * One operation.
     *
     * @param family the column family id (0: default)
     * @param sequence its sequence number
     * @param key the key
     * @param value the value of a put, null for a delete
     */
    void op(int family, long sequence, byte[] key, byte[] value);
  }

  /**
   * Reads every operation of a batch.
   *
   * @throws IllegalArgumentException if the batch is cut short or holds a type not read here; the
   *     operations before it were handed over
   */
  static void read(byte[] payload, Ops out) {
    if (payload.length < 12) {
      throw new IllegalArgumentException("write batch of " + payload.length + " bytes");
    }
    ByteBuffer b = ByteBuffer.wrap(payload).order(ByteOrder.LITTLE_ENDIAN);
    long seq = b.getLong();
    b.getInt();
    while (b.hasRemaining()) {
      int tag = b.get() & 0xFF;
      int cf = 0;
      switch (tag) {
        case 0x1, 0x0, 0x7 -> {}
        case 0x5, 0x4, 0x8 -> cf = (int) varint(b);
        case 0x3 -> {
          field(b);
          continue;
        }
        case 0xD -> {
          continue;
        }
        default -> throw new IllegalArgumentException("write batch record type " + tag);
      }
      byte[] key = field(b);
      boolean put = tag == 0x1 || tag == 0x5;
      byte[] value = put ? field(b) : null;
      out.op(cf, seq++, key, value);
    }
  }

  /**
   * The operations a batch that failed its checksum appears to hold, as far as they parse: hints of
   * which keys a lost batch touched, never data to apply.
   */
  static void readWhatParses(byte[] payload, Ops out) {
    try {
      read(payload, out);
    } catch (IllegalArgumentException | java.nio.BufferUnderflowException e) {
      // the rest does not parse: nothing more to tell
    }
  }

  private static byte[] field(ByteBuffer b) {
    long n = varint(b);
    if (n > b.remaining()) {
      throw new IllegalArgumentException("write batch field runs past its end");
    }
    byte[] out = new byte[(int) n];
    b.get(out);
    return out;
  }

  private static long varint(ByteBuffer b) {
    long v = 0;
    for (int shift = 0; shift <= 28; shift += 7) {
      if (!b.hasRemaining()) {
        throw new IllegalArgumentException("write batch varint runs past its end");
      }
      int x = b.get() & 0xFF;
      v |= (long) (x & 0x7F) << shift;
      if ((x & 0x80) == 0) {
        return v;
      }
    }
    throw new IllegalArgumentException("write batch varint too long");
  }
}
