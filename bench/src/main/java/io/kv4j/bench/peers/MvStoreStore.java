package io.kv4j.bench.peers;

import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.StoreConfig;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractStore;
import io.kv4j.spi.DirectoryLock;
import java.nio.file.Path;
import java.util.Map;
import org.h2.mvstore.Cursor;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.type.ByteArrayDataType;

/** See {@link MvStoreProvider} for the settings. */
final class MvStoreStore extends AbstractStore {
  private static final String ENGINE = "mvstore";

  private final Path dir;
  private final DirectoryLock lock;
  private final MVStore store;
  private final MVMap<byte[], byte[]> map;
  private final boolean sync;
  private final boolean commitEachWrite;
  private final LockedMap writes;

  MvStoreStore(StoreConfig config) {
    super(
        new StoreInfo(
            ENGINE,
            MvStoreProvider.FEATURES,
            MvStoreProvider.LIMITS,
            config.durability(),
            String.valueOf(config.path()),
            config.readOnly()));
    this.dir = Peers.directory(config, ENGINE);
    this.lock = DirectoryLock.acquire(dir, ENGINE);
    this.sync = config.durability() == Durability.SYNC;
    this.commitEachWrite = sync || config.get(MvStoreProvider.CRASH_SAFE);
    try {
      MVStore.Builder b =
          new MVStore.Builder()
              .fileName(dir.resolve("mvstore.db").toString())
              .cacheSize(config.get(MvStoreProvider.CACHE_SIZE));
      if (commitEachWrite) {
        b = b.autoCommitDisabled();
      }
      if (config.readOnly()) {
        b = b.readOnly();
      }
      this.store = b.open();
      // Retention time and versions to keep stay at their defaults: with setRetentionTime(0)
      // concurrent readers fail with "Chunk ... not found" (seen here under ycsb-b at 2 threads).
      this.map =
          store.openMap(
              "kv",
              new MVMap.Builder<byte[], byte[]>()
                  .keyType(ByteArrayDataType.INSTANCE)
                  .valueType(ByteArrayDataType.INSTANCE));
    } catch (RuntimeException e) {
      lock.close();
      throw new StoreIOException("engine 'mvstore': cannot open " + dir + ": " + e.getMessage(), e);
    }
    // No rollback of a batch that fails part-way: MVStore is not declared ATOMIC_BATCH here, and
    // this adapter never undid one (MapDB's, with transactions, does).
    this.writes = new LockedMap(map, this::commit, () -> {});
  }

  @Override
  protected byte[] doGet(byte[] key) {
    return writes.get(key);
  }

  @Override
  protected void doPut(byte[] key, byte[] value) {
    writes.put(key, value);
  }

  @Override
  protected void doDelete(byte[] key) {
    writes.delete(key);
  }

  @Override
  protected void doWrite(WriteBatch batch) {
    writes.write(batch);
  }

  private void commit() {
    if (!commitEachWrite) {
      return;
    }
    store.commit();
    if (sync) {
      store.sync();
    }
  }

  @Override
  protected AbstractCursor doScan(KeyRange range) {
    return new MvCursor(this, range, map);
  }

  @Override
  protected void doSync() {
    writes.locked(
        () -> {
          if (!info().readOnly()) {
            store.commit();
            store.sync();
          }
        });
  }

  @Override
  protected StoreStats doStats() {
    return new StoreStats(map.sizeAsLong(), true, Peers.bytes(dir), Map.of());
  }

  @Override
  protected void doClose() {
    try {
      writes.locked(store::close);
    } finally {
      lock.close();
    }
  }

  /** Iterates an MVMap cursor, which reads one immutable version of the map. */
  private static final class MvCursor extends AbstractCursor {
    private final KeyRange range;
    private Cursor<byte[], byte[]> cursor;

    MvCursor(AbstractStore store, KeyRange range, MVMap<byte[], byte[]> map) {
      super(store, range);
      this.range = range;
      if (!range.isEmpty()) {
        this.cursor =
            range.isReverse()
                ? map.cursor(range.upper(), range.lower(), true)
                : map.cursor(range.lower(), range.upper(), false);
      }
    }

    @Override
    protected Entry advance() {
      while (cursor != null && cursor.hasNext()) {
        byte[] k = cursor.next();
        // The MVMap bounds are inclusive; exclusive bounds are applied here.
        boolean pastFar = range.isReverse() ? !range.aboveLower(k) : !range.belowUpper(k);
        if (pastFar) {
          return null;
        }
        boolean beforeNear = range.isReverse() ? !range.belowUpper(k) : !range.aboveLower(k);
        if (beforeNear) {
          continue;
        }
        return new Entry(k.clone(), cursor.getValue().clone());
      }
      return null;
    }

    @Override
    protected void release() {
      cursor = null;
    }
  }
}
