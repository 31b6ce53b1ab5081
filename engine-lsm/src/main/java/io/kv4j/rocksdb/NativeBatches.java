package io.kv4j.rocksdb;

import io.kv4j.WriteBatch;
import java.nio.file.Path;
import org.rocksdb.RocksDBException;

/**
 * The write path's native batches: a kv4j batch as one RocksDB {@code WriteBatch}, its records
 * naming their column families, reserved at its exact serialized size.
 */
final class NativeBatches {
  private NativeBatches() {}

  /**
   * The native batch for a kv4j batch, its buffer reserved at the exact size it ends at ({@link
   * #nativeBatchBytes}). Without the reservation RocksDB grows the buffer by doubling as records
   * are appended: about 17 reallocations for 1,000 values of 1 KiB, each copying all records so
   * far, so every byte would be copied once more than it must (and freshly allocated pages touched
   * again). Per operation there is one JNI call, which copies key and value out of the Java arrays
   * once, and one append to the reserved buffer; no Java object is allocated.
   *
   * @param batch the kv4j batch
   * @param dir the store directory, for error messages
   * @return the native batch; the caller closes it
   */
  static org.rocksdb.WriteBatch nativeBatch(WriteBatch batch, Path dir) {
    return nativeBatch(batch, null, null, dir);
  }

  /**
   * The native batch for a kv4j batch written to the column {@code own} (null: the store's own
   * keys), each operation {@code i} going to {@code columns[i]} if {@code columns} is not null.
   */
  static org.rocksdb.WriteBatch nativeBatch(
      WriteBatch batch, Column own, Column[] columns, Path dir) {
    long bytes = nativeBatchBytes(batch, own, columns);
    org.rocksdb.WriteBatch wb =
        new org.rocksdb.WriteBatch(bytes > Integer.MAX_VALUE ? 0 : (int) bytes);
    boolean ok = false;
    try {
      for (int i = 0, n = batch.size(); i < n; i++) {
        Column c = columns == null ? own : columns[i];
        if (c == null || c.id == 0) { // the default column family: records without an id
          if (batch.isDelete(i)) {
            wb.delete(batch.key(i));
          } else {
            wb.put(batch.key(i), batch.value(i));
          }
        } else if (batch.isDelete(i)) {
          wb.delete(c.handle, batch.key(i));
        } else {
          wb.put(c.handle, batch.key(i), batch.value(i));
        }
      }
      ok = true;
      return wb;
    } catch (RocksDBException e) {
      throw Failures.translate(dir, "write batch", e);
    } finally {
      if (!ok) {
        wb.close();
      }
    }
  }

  /**
   * The size of RocksDB's serialized form of a batch (its {@code WriteBatch} rep, as it also goes
   * into the WAL record), without per-key protection bytes. A record for another column family than
   * the default one has another type byte (0x05 put, 0x04 delete) followed by the family's id
   * (varint32):
   *
   * <pre>
   * offset  width        field
   * 0       8            sequence number (fixed64, filled in at write)
   * 8       4            count of records (fixed32)
   * 12      ...          records, each:
   *         1            type: 0x01 put (kTypeValue), 0x00 delete (kTypeDeletion)
   *         1..5         key length (varint32)
   *         n            key
   *         1..5         value length (varint32), puts only
   *         m            value, puts only
   * </pre>
   */
  static long nativeBatchBytes(WriteBatch batch) {
    return nativeBatchBytes(batch, null, null);
  }

  /** {@link #nativeBatchBytes(WriteBatch)} for a batch whose records go to the given columns. */
  static long nativeBatchBytes(WriteBatch batch, Column own, Column[] columns) {
    long bytes = 12;
    for (int i = 0, n = batch.size(); i < n; i++) {
      Column c = columns == null ? own : columns[i];
      int k = batch.key(i).length;
      bytes += 1 + varintLength(k) + k;
      if (c != null && c.id != 0) {
        bytes += varintLength(c.id);
      }
      if (!batch.isDelete(i)) {
        int v = batch.value(i).length;
        bytes += varintLength(v) + v;
      }
    }
    return bytes;
  }

  private static int varintLength(int n) {
    // 7 bits per byte; n is never negative (an array length).
    return n < (1 << 7) ? 1 : n < (1 << 14) ? 2 : n < (1 << 21) ? 3 : n < (1 << 28) ? 4 : 5;
  }
}
