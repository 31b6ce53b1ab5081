package io.kv4j.hashlog;

import io.kv4j.KeyRange;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractSnapshot;
import io.kv4j.spi.AbstractStore;
import java.util.List;

/**
 * A handle on a named keyspace: every call goes to the keyspace's own sub-store (see {@link
 * Keyspaces}), which the store owns. Closing the handle releases nothing but the handle (and its
 * cursors and snapshots); the sub-store stays open for other handles until the store closes or
 * drops the keyspace. A call in flight when the keyspace is dropped ends with {@code
 * StoreClosedException} from the closed sub-store, whose reader guard and writer lock keep it from
 * touching an unmapped segment.
 */
final class KeyspaceHandle extends AbstractStore {
  private final HashLogStore keys;

  KeyspaceHandle(HashLogStore store, String name, HashLogStore keys) {
    super(store, name);
    this.keys = keys;
  }

  @Override
  protected byte[] doGet(byte[] key) {
    return keys.doGet(key);
  }

  @Override
  protected List<byte[]> doGetAll(List<byte[]> k) {
    return keys.doGetAll(k);
  }

  @Override
  protected void doPut(byte[] key, byte[] value) {
    keys.doPut(key, value);
  }

  @Override
  protected void doDelete(byte[] key) {
    keys.doDelete(key);
  }

  /** Every operation is this keyspace's: the store declares no {@code KEYSPACE_BATCH}. */
  @Override
  protected void doWrite(WriteBatch batch) {
    keys.doWrite(batch);
  }

  /**
   * Every condition is this keyspace's too (no {@code KEYSPACE_BATCH}): the sub-store checks it.
   */
  @Override
  protected boolean doWriteIf(WriteBatch batch) {
    return keys.doWriteIf(batch);
  }

  @Override
  protected boolean doCompareAndSet(byte[] key, byte[] expected, byte[] value) {
    return keys.doCompareAndSet(key, expected, value);
  }

  @Override
  protected AbstractCursor doScan(KeyRange range) {
    return keys.scan(this, range);
  }

  @Override
  protected AbstractSnapshot doSnapshot() {
    return keys.snapshot(this);
  }

  @Override
  protected void doSync() {
    keys.doSync();
  }

  @Override
  protected void doCompact() {
    keys.doCompact();
  }

  @Override
  protected void doVerify() {
    keys.doVerify();
  }

  @Override
  protected StoreStats doStats() {
    return keys.doStats();
  }

  @Override
  protected void doClose() {
    // The sub-store belongs to the store.
  }
}
