package io.kv4j.rocksdb;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.RocksDB;

/**
 * One column family of the store's database and the keyspace it holds: {@code default} holds the
 * store's own keys, {@code keyspace:<name>} a named keyspace.
 *
 * <p>Native lifetime: the handle is freed once ({@link #free()}), either by a drop after every call
 * that could still use it has left the store's gate, or by the store's close after the gate closed,
 * before the database. A call enters the gate and then checks {@link #dropped}; a drop sets it
 * before it waits for the calls that entered earlier, so no call reaches a freed handle.
 */
final class Column {
  /**
   * The prefix of a keyspace's column family name. Keyspace names never hold {@code :}, so a future
   * internal column family (any name without this prefix) can never collide with one.
   */
  static final String PREFIX = "keyspace:";

  /** The keyspace name, or null for the store's own keys (the {@code default} column family). */
  final String keyspace;

  /** The native handle; valid until {@link #free()}. */
  final ColumnFamilyHandle handle;

  /** The column family's id, 0 for {@code default}; it goes into batch records of other ones. */
  final int id;

  /**
   * Mixed into the key's stripe in {@link KeyLocks}: conditional writes lock per (keyspace, key).
   */
  final int salt;

  /** Set by a drop before it waits for the calls in flight; a call that sees it backs out. */
  volatile boolean dropped;

  private final AtomicBoolean freed = new AtomicBoolean();

  Column(String keyspace, ColumnFamilyHandle handle) {
    this.keyspace = keyspace;
    this.handle = handle;
    this.id = handle.getID();
    this.salt = saltOf(keyspace);
  }

  /**
   * The salt of a keyspace's keys, from its name alone: a conditional batch locks the stripes of
   * keys in a keyspace that does not exist yet, and a writer that creates it meanwhile must meet
   * the same stripes.
   *
   * @param keyspace the name, or null for the store's own keys (salt 0)
   */
  static int saltOf(String keyspace) {
    return keyspace == null ? 0 : keyspace.hashCode() * 0x9E3779B1 | 1;
  }

  /** The column family name of a keyspace (null: the default column family). */
  static byte[] familyName(String keyspace) {
    return keyspace == null
        ? RocksDB.DEFAULT_COLUMN_FAMILY
        : (PREFIX + keyspace).getBytes(StandardCharsets.UTF_8);
  }

  /**
   * The keyspace a column family name holds.
   *
   * @return the name, null for {@code default}, or "" for a column family that is no keyspace
   */
  static String keyspaceOf(byte[] familyName) {
    String n = new String(familyName, StandardCharsets.UTF_8);
    if (n.equals("default")) {
      return null;
    }
    return n.startsWith(PREFIX) ? n.substring(PREFIX.length()) : "";
  }

  /** Frees the native handle, once. */
  void free() {
    if (freed.compareAndSet(false, true)) {
      handle.close();
    }
  }
}
