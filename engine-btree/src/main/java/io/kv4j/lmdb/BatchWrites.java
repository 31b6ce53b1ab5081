package io.kv4j.lmdb;

import io.kv4j.WriteBatch;
import java.util.HashMap;
import java.util.Map;
import org.lmdbjava.Dbi;
import org.lmdbjava.Txn;

/**
 * Where the writes of one store object (the store, or a keyspace handle) land in a write
 * transaction: a batch's operations, each in the database of its keyspace, and the databases its
 * conditions read. Every method runs in a group commit's write transaction, under the writer lock,
 * so no keyspace is dropped meanwhile.
 */
final class BatchWrites {
  private final Space own; // the store's own keys
  private final Space space; // this store object's: own, or a keyspace handle's
  private final Keyspaces keyspaces; // null in formats 1 and 2
  private final boolean framed;

  BatchWrites(Space own, Space space, Keyspaces keyspaces, boolean framed) {
    this.own = own;
    this.space = space;
    this.keyspaces = keyspaces;
    this.framed = framed;
  }

  /** A value as stored: in a {@link ValueFrame} in a framed store, else as given. */
  byte[] stored(byte[] key, byte[] value) {
    return framed ? ValueFrame.encode(key, value) : value;
  }

  /**
   * Applies a batch's operations.
   *
   * @param names operation {@code i}'s keyspace in {@code names[i]}, as the store resolved it
   *     (null: the store's own keys); or null when no operation names a keyspace, so every one
   *     applies to this store object's database
   */
  void apply(Txn<byte[]> txn, WriteBatch batch, String[] names) {
    Map<String, Dbi<byte[]>> named = new HashMap<>();
    for (int i = 0, n = batch.size(); i < n; i++) {
      Dbi<byte[]> db = names == null ? space.dbi() : dbOf(txn, names[i], named);
      try {
        byte[] key = batch.key(i);
        if (batch.isDelete(i)) {
          db.delete(txn, key);
        } else {
          db.put(txn, key, stored(key, batch.value(i)));
        }
      } finally {
        ArrayProxy.release();
      }
    }
  }

  /**
   * The database a batch operation applies to: the store's own, this handle's, or another
   * keyspace's, opened (and created, if absent) in the batch's own write transaction, so a batch
   * naming an absent keyspace creates it atomically with its writes.
   */
  private Dbi<byte[]> dbOf(Txn<byte[]> txn, String keyspace, Map<String, Dbi<byte[]>> named) {
    if (keyspace == null) {
      return own.dbi();
    }
    if (keyspace.equals(space.name())) {
      return space.dbi();
    }
    return named.computeIfAbsent(keyspace, k -> keyspaces.resolve(txn, k).dbi());
  }

  /**
   * The database a condition reads: as an operation's, but never created; null when the keyspace
   * does not exist (it holds no key).
   */
  Dbi<byte[]> existing(Txn<byte[]> txn, String keyspace) {
    if (keyspace == null) {
      return own.dbi();
    }
    if (keyspace.equals(space.name())) {
      return space.dbi();
    }
    Space s = keyspaces.find(txn, keyspace);
    return s == null ? null : s.dbi();
  }
}
