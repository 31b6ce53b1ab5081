package io.kv4j.hashlog;

/**
 * One append to the {@link SegmentLog}, made before the writer lock is taken: a put or delete
 * record (its header and checksum computed here), or a batch record announcing a {@link
 * PreparedBatch}'s members.
 *
 * @param type the record's type ({@link RecordCodec#PUT}, {@link RecordCodec#DELETE} or {@link
 *     RecordCodec#BATCH})
 * @param hash the key's index hash (a put or delete; 0 for a batch)
 * @param key the key (null for a batch)
 * @param value the value (null for a delete; the batch record's value for a batch)
 * @param header the record's {@link RecordCodec#header header}, checksum included
 * @param batch the batch whose batch record this is, else null
 */
record LogWrite(
    byte type, long hash, byte[] key, byte[] value, byte[] header, PreparedBatch batch) {
  /**
   * A put ({@code value} not null) or delete ({@code value} null) of {@code key}, its header made
   * here.
   */
  static LogWrite record(long hash, byte[] key, byte[] value) {
    byte type = value == null ? RecordCodec.DELETE : RecordCodec.PUT;
    return new LogWrite(type, hash, key, value, RecordCodec.header(type, key, value), null);
  }

  /** The batch record of {@code batch}, followed in the log by its members. */
  static LogWrite batch(PreparedBatch batch) {
    return new LogWrite(RecordCodec.BATCH, 0, null, batch.value, batch.header, batch);
  }

  /** Bytes the write adds to the log: the record, or the batch record and all its members. */
  long size() {
    return batch != null
        ? batch.totalBytes
        : RecordCodec.recordSize(key.length, value == null ? 0 : value.length);
  }
}
