package io.kv4j.tck.ref;

import io.kv4j.Cursor;
import io.kv4j.KeyRange;
import io.kv4j.Snapshot;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import java.util.List;

/**
 * A handle on a named keyspace of a {@link RefStore}: every call goes to the store with the
 * keyspace's name, under the store's lock and into its one log. Its info is the store's without
 * {@code KEYSPACES} and {@code BACKUP}, located at {@code location#name}. Closed by {@link
 * #close()}, by the store's close and by a drop of the keyspace; its cursors and snapshots close
 * with it.
 */
final class RefKeyspace implements Store {
  private final RefStore store;
  private final String name;
  private final StoreInfo info;
  private volatile boolean closed;

  RefKeyspace(RefStore store, String name, StoreInfo info) {
    this.store = store;
    this.name = name;
    this.info = info;
  }

  String name() {
    return name;
  }

  boolean isClosed() {
    return closed || store.isClosed();
  }

  private void check() {
    if (store.defect() == Defect.CLOSED_HANDLE_REFUSES_ONLY_GET) {
      return; // the bug: only get (checkForGet) refuses a closed handle
    }
    checkForGet();
  }

  private void checkForGet() {
    if (isClosed()) {
      throw new StoreClosedException("engine 'ref': keyspace " + info.location() + " is closed");
    }
  }

  @Override
  public byte[] get(byte[] key) {
    checkForGet();
    return store.get(name, key);
  }

  @Override
  public void put(byte[] key, byte[] value) {
    check();
    store.put(name, key, value);
  }

  @Override
  public void delete(byte[] key) {
    check();
    store.delete(name, key);
  }

  @Override
  public List<byte[]> getAll(List<byte[]> keys) {
    check();
    return store.getAll(name, keys);
  }

  @Override
  public boolean putIfAbsent(byte[] key, byte[] value) {
    check();
    return answer(store.putIfAbsent(name, key, value));
  }

  @Override
  public boolean replace(byte[] key, byte[] expected, byte[] value) {
    check();
    return answer(store.replace(name, key, expected, value));
  }

  @Override
  public boolean delete(byte[] key, byte[] expected) {
    check();
    return answer(store.delete(name, key, expected));
  }

  /** What a conditional write through the handle answers: the store's answer (but for a defect). */
  private boolean answer(boolean acted) {
    return acted || store.defect() == Defect.HANDLE_CONDITIONAL_ANSWERS_TRUE;
  }

  @Override
  public Snapshot snapshot() {
    check();
    requireSnapshots();
    return store.snapshot(name, this);
  }

  private void requireSnapshots() {
    if (!info.has(io.kv4j.Feature.SNAPSHOT_READ)) {
      throw new UnsupportedOperationException(
          info.describe() + " does not support " + io.kv4j.Feature.SNAPSHOT_READ);
    }
  }

  @Override
  public Cursor scan(KeyRange range) {
    check();
    return store.scan(name, this, range);
  }

  @Override
  public void write(WriteBatch batch) {
    check();
    store.write(name, batch);
  }

  @Override
  public boolean writeIf(WriteBatch batch) {
    check();
    return answer(store.writeIf(name, batch));
  }

  @Override
  public void sync() {
    check();
    if (store.defect() != Defect.HANDLE_SYNC_SYNCS_NOTHING) {
      store.sync();
    }
  }

  @Override
  public void verify() {
    check();
    if (store.defect() != Defect.HANDLE_VERIFY_DOES_NOTHING) {
      store.verify();
    }
  }

  @Override
  public StoreInfo info() {
    return info;
  }

  @Override
  public StoreStats stats() {
    check();
    return store.stats(name, this);
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    store.closeHandle(this);
  }
}
