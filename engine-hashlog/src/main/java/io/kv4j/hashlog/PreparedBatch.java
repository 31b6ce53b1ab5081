package io.kv4j.hashlog;

import io.kv4j.WriteBatch;

/**
 * A {@link WriteBatch} made ready for the {@link SegmentLog} before the writer lock is taken: each
 * member's index hash and record header (its checksum computed here, off the lock), the batch
 * record that announces the members, and room for what the append fills in under the lock (each
 * member's location and the location it superseded).
 */
final class PreparedBatch {
  private final WriteBatch batch;

  /** Each member's index hash. */
  final long[] hashes;

  /** Each member's record header, checksum included. */
  final byte[][] headers;

  /** The batch record's value (member count and bytes) and header. */
  final byte[] value;

  final byte[] header;

  /** Bytes of the batch record and all its members. */
  final long totalBytes;

  /** Filled in by the append: each member's location, and the location it superseded (or 0). */
  final long[] locations;

  final long[] superseded;

  /**
   * @throws IllegalArgumentException if the batch does not fit in one segment
   */
  PreparedBatch(WriteBatch batch, Index index, StoreState state) {
    this.batch = batch;
    int n = batch.size();
    hashes = new long[n];
    headers = new byte[n][];
    long members = 0;
    for (int i = 0; i < n; i++) {
      hashes[i] = index.hash(batch.key(i));
      headers[i] = RecordCodec.header(type(i), batch.key(i), batch.value(i));
      members += recordSize(i);
    }
    totalBytes = RecordCodec.recordSize(0, RecordCodec.BATCH_VALUE) + members;
    if (totalBytes + RecordCodec.FILE_HEADER > Segments.MAX_SEGMENT) {
      throw new IllegalArgumentException(
          "hashlog: batch of "
              + totalBytes
              + " bytes does not fit in one segment (at most "
              + Segments.MAX_SEGMENT
              + " bytes); split it ("
              + state.describe()
              + ")");
    }
    value = RecordCodec.batchValue(n, members);
    header = RecordCodec.header(RecordCodec.BATCH, null, value);
    locations = new long[n];
    superseded = new long[n];
  }

  int size() {
    return hashes.length;
  }

  byte type(int i) {
    return batch.isDelete(i) ? RecordCodec.DELETE : RecordCodec.PUT;
  }

  byte[] key(int i) {
    return batch.key(i);
  }

  /** The member's value; null for a delete. */
  byte[] value(int i) {
    return batch.value(i);
  }

  long recordSize(int i) {
    byte[] v = batch.value(i);
    return RecordCodec.recordSize(batch.key(i).length, v == null ? 0 : v.length);
  }
}
