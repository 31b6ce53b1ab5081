package io.kv4j.lmdb;

import io.kv4j.WriteBatch;
import java.util.Arrays;
import java.util.function.IntFunction;
import org.lmdbjava.Dbi;
import org.lmdbjava.Txn;

/**
 * Reads inside a write transaction: the current value a conditional write or a conditional batch
 * compares, in the transaction that then commits its writes. LMDB has one write transaction at a
 * time, so nothing can change a key between that read and the commit.
 *
 * <p>The read passes no {@link MapBounds}: inside a write transaction the value may lie in a dirty
 * page LMDB copied to the heap, outside the map, which the bounds check would call damage. Clean
 * pages it reads are the pages this transaction's own put would walk; their records lie within a
 * page (plus at most 64 KiB), or on overflow pages LMDB checks against the last page in use, all
 * inside the file and its zero {@link LmdbStore#TAIL}. A framed value's checksum is verified as by
 * a get: a damaged value fails the write instead of comparing unequal.
 */
final class Conditions {
  private Conditions() {}

  /**
   * The value of {@code key} in {@code db} as {@code txn} sees it, or null if absent.
   *
   * @param framed whether the store's values carry a {@link ValueFrame}
   */
  static byte[] current(Txn<byte[]> txn, Dbi<byte[]> db, byte[] key, boolean framed) {
    try {
      ArrayProxy.beginGet(null, framed, key);
      return db.get(txn, key);
    } finally {
      ArrayProxy.release();
    }
  }

  /**
   * Whether {@code current} is what a condition expects: byte for byte equal, or absent when {@code
   * expected} is null.
   */
  static boolean matches(byte[] current, byte[] expected) {
    return expected == null ? current == null : current != null && Arrays.equals(current, expected);
  }

  /**
   * Whether every condition of a batch holds in {@code txn}, checked before any of the batch's
   * operations is applied.
   *
   * @param dbOf the database of condition {@code i}, or null when its keyspace does not exist (then
   *     the key is absent)
   */
  static boolean hold(
      Txn<byte[]> txn, WriteBatch batch, IntFunction<Dbi<byte[]>> dbOf, boolean framed) {
    for (int i = 0, n = batch.conditionCount(); i < n; i++) {
      Dbi<byte[]> db = dbOf.apply(i);
      byte[] current = db == null ? null : current(txn, db, batch.conditionKey(i), framed);
      if (!matches(current, batch.conditionValue(i))) {
        return false;
      }
    }
    return true;
  }
}
