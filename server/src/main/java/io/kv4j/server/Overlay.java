package io.kv4j.server;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The writes of a transaction while EXEC runs its commands: later commands of the transaction read
 * them, the store sees them only when EXEC commits them together (one {@code WriteBatch} where the
 * engine has {@code ATOMIC_BATCH}).
 */
final class Overlay {
  /** Marks a deleted key. Compared by identity. */
  static final byte[] DELETED = new byte[0];

  final Map<Key, byte[]> writes = new LinkedHashMap<>();

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
