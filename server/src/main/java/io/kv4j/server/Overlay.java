package io.kv4j.server;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The writes of a transaction while EXEC runs its commands: later commands of the transaction read
 * them, the store sees them only when EXEC commits them together (one {@code WriteBatch} where the
 * engine has {@code ATOMIC_BATCH}). On a store shared with other servers it also records what the
 * transaction read from the store, so the commit can require that nothing read has changed.
 */
final class Overlay {
  /** Marks a deleted key. Compared by identity. */
  static final byte[] DELETED = new byte[0];

  /** Marks a key read as absent in {@link #reads}. Compared by identity. */
  static final byte[] ABSENT = new byte[0];

  final Map<Key, byte[]> writes = new LinkedHashMap<>();

  /** The value first read from the store for each key ({@link #ABSENT}), when recording reads. */
  final Map<Key, byte[]> reads;

  /**
   * @param recordReads whether to record the store values the transaction reads (on a store shared
   *     with other servers)
   */
  Overlay(boolean recordReads) {
    this.reads = recordReads ? new LinkedHashMap<>() : null;
  }

  boolean recordsReads() {
    return reads != null;
  }

  /** Records a value read from the store (null: absent); the first read of a key counts. */
  void read(byte[] key, byte[] stored) {
    reads.putIfAbsent(new Key(key), stored == null ? ABSENT : stored);
  }

  /** The pending value, {@link #DELETED}, or null when the transaction did not write the key. */
  byte[] get(byte[] key) {
    return writes.get(new Key(key));
  }

  void put(byte[] key, byte[] value) {
    writes.put(new Key(key), value);
  }

  void delete(byte[] key) {
    writes.put(new Key(key), DELETED);
  }
}
