package io.kv4j.etcd;

import io.kv4j.KeyRange;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractSnapshot;
import java.util.List;

/**
 * Reads at one etcd revision, taken linearizably when the snapshot opens. Holds nothing on the
 * server: the revision stays readable until the cluster compacts its history past it (then reads
 * fail with StoreIOException saying so).
 */
final class EtcdSnapshot extends AbstractSnapshot {
  private final EtcdStore store;
  private final long revision;

  EtcdSnapshot(EtcdStore store, long revision) {
    super(store);
    this.store = store;
    this.revision = revision;
  }

  @Override
  protected byte[] doGet(byte[] key) {
    return store.reads.get(key, revision);
  }

  @Override
  protected List<byte[]> doGetAll(List<byte[]> keys) {
    return store.reads.getAll(keys, revision);
  }

  @Override
  protected AbstractCursor doScan(KeyRange range) {
    return new EtcdCursor(store, range, revision);
  }

  @Override
  protected void release() {
    // Nothing held on the server.
  }
}
