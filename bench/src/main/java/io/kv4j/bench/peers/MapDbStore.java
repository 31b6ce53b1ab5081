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
import java.util.Iterator;
import java.util.Map;
import java.util.NavigableMap;
import org.mapdb.BTreeMap;
import org.mapdb.DB;
import org.mapdb.DBMaker;
import org.mapdb.Serializer;

/** See {@link MapDbProvider} for the settings. */
final class MapDbStore extends AbstractStore {
  private static final String ENGINE = "mapdb";

  private final Path dir;
  private final DirectoryLock lock;
  private final DB db;
  private final BTreeMap<byte[], byte[]> map;
  private final boolean transactions;
  private final LockedMap writes;

  MapDbStore(StoreConfig config) {
    super(
        new StoreInfo(
            ENGINE,
            MapDbProvider.FEATURES,
            MapDbProvider.LIMITS,
            config.durability(),
            String.valueOf(config.path()),
            config.readOnly()));
    this.dir = Peers.directory(config, ENGINE);
    this.lock = DirectoryLock.acquire(dir, ENGINE);
    this.transactions =
        config.durability() == Durability.SYNC || config.get(MapDbProvider.CRASH_SAFE);
    try {
      DBMaker.Maker m =
          DBMaker.fileDB(dir.resolve("mapdb.db").toFile())
              .fileMmapEnable()
              .fileMmapPreclearDisable()
              .cleanerHackEnable();
      if (transactions) {
        m = m.transactionEnable();
        if (config.durability() == Durability.BUFFERED) {
          m = m.fileSyncDisable();
        }
      }
      if (config.readOnly()) {
        m = m.readOnly();
      }
      this.db = m.make();
      this.map =
          db.treeMap("kv", Serializer.BYTE_ARRAY, Serializer.BYTE_ARRAY)
              .valuesOutsideNodesEnable()
              .createOrOpen();
    } catch (RuntimeException e) {
      lock.close();
      throw new StoreIOException("engine 'mapdb': cannot open " + dir + ": " + e.getMessage(), e);
    }
    this.writes =
        new LockedMap(
            map,
            this::commit,
            () -> {
              if (transactions) {
                db.rollback();
              }
            });
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
    if (transactions) {
      db.commit();
    }
  }

  @Override
  protected AbstractCursor doScan(KeyRange range) {
    return new MapCursor(this, range, range.isEmpty() ? null : range.view(map));
  }

  @Override
  protected void doSync() {
    writes.locked(
        () -> {
          if (!info().readOnly()) {
            commit();
          }
          Peers.forceAll(dir, ENGINE);
        });
  }

  @Override
  protected StoreStats doStats() {
    return new StoreStats(map.sizeLong(), true, Peers.bytes(dir), Map.of());
  }

  @Override
  protected void doClose() {
    try {
      writes.locked(db::close);
    } finally {
      lock.close();
    }
  }

  /**
   * Iterates a live view of the map: ordered, not a snapshot; keys deleted after the iterator read
   * their leaf are skipped.
   */
  static final class MapCursor extends AbstractCursor {
    private Iterator<Map.Entry<byte[], byte[]>> it;
    private final KeyRange range;

    MapCursor(AbstractStore store, KeyRange range, NavigableMap<byte[], byte[]> view) {
      super(store, range);
      this.range = range;
      this.it = view == null ? null : view.entrySet().iterator();
    }

    @Override
    protected Entry advance() {
      while (it != null && it.hasNext()) {
        Map.Entry<byte[], byte[]> e = it.next();
        if (!range.contains(e.getKey())) {
          return null;
        }
        // The iterator walks a leaf it read earlier and fetches each value when it gets there
        // (values live outside the nodes): a key deleted meanwhile comes back with a null value.
        // It is gone now, so a live cursor skips it.
        byte[] v = e.getValue();
        if (v != null) {
          return new Entry(e.getKey().clone(), v.clone());
        }
      }
      return null;
    }

    @Override
    protected void release() {
      it = null;
    }
  }
}
