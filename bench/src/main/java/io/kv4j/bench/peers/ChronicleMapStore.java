package io.kv4j.bench.peers;

import io.kv4j.Durability;
import io.kv4j.KeyRange;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreConfig;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.kv4j.spi.AbstractCursor;
import io.kv4j.spi.AbstractStore;
import io.kv4j.spi.CallGate;
import io.kv4j.spi.DirectoryLock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import net.openhft.chronicle.map.ChronicleMap;
import net.openhft.chronicle.map.ChronicleMapBuilder;

/** See {@link ChronicleMapProvider} for the settings. */
final class ChronicleMapStore extends AbstractStore {
  private static final String ENGINE = "chronicle-map";
  private static final String FILE = "chronicle.map";
  private static final String CLEAN = "closed-cleanly";

  static {
    // Must be set before Chronicle's classes initialise; the runner also sets it in main().
    if (System.getProperty("chronicle.analytics.disable") == null) {
      System.setProperty("chronicle.analytics.disable", "true");
    }
  }

  private final Path dir;
  private final DirectoryLock lock;
  private final ChronicleMap<byte[], byte[]> map;

  /** Guards native access: calls share it, close takes it exclusively. */
  // Calls in flight, so close never frees the map under one (a crash, not an exception). A gate
  // rather than a read-write lock: a lock's shared read count would make this wrapper, not
  // Chronicle
  // Map, the bottleneck of concurrent gets.
  private final CallGate gate = new CallGate();

  ChronicleMapStore(StoreConfig config) {
    super(
        new StoreInfo(
            ENGINE,
            ChronicleMapProvider.FEATURES,
            ChronicleMapProvider.LIMITS,
            config.durability(),
            String.valueOf(config.path()),
            config.readOnly()));
    if (config.durability() == Durability.SYNC) {
      throw new IllegalArgumentException(
          "engine 'chronicle-map' cannot honour durability SYNC: it never forces its"
              + " memory-mapped file to disk; open it with durability=buffered");
    }
    this.dir = Peers.directory(config, ENGINE);
    this.lock = DirectoryLock.acquire(dir, ENGINE);
    try {
      Path file = dir.resolve(FILE);
      Path clean = dir.resolve(CLEAN);
      boolean existed = Files.exists(file);
      boolean recover = existed && !Files.exists(clean);
      ChronicleMapBuilder<byte[], byte[]> b =
          ChronicleMapBuilder.of(byte[].class, byte[].class)
              .name("kv4j")
              .entries(config.get(ChronicleMapProvider.ENTRIES))
              .averageKeySize(config.get(ChronicleMapProvider.AVERAGE_KEY_SIZE))
              .averageValueSize(config.get(ChronicleMapProvider.AVERAGE_VALUE_SIZE))
              .putReturnsNull(true)
              .removeReturnsNull(true);
      Files.deleteIfExists(clean);
      this.map =
          recover ? b.recoverPersistedTo(file.toFile(), true) : b.createPersistedTo(file.toFile());
    } catch (IOException | RuntimeException e) {
      lock.close();
      throw new StoreIOException(
          "engine 'chronicle-map': cannot open " + dir + ": " + e.getMessage(), e);
    }
  }

  private int enter() {
    int token = gate.enter();
    if (token < 0) {
      throw new StoreClosedException(info().describe() + " is closed");
    }
    return token;
  }

  @Override
  protected byte[] doGet(byte[] key) {
    int token = enter();
    try {
      return map.get(key);
    } finally {
      gate.exit(token);
    }
  }

  @Override
  protected void doPut(byte[] key, byte[] value) {
    int token = enter();
    try {
      map.put(key, value);
    } finally {
      gate.exit(token);
    }
  }

  @Override
  protected void doDelete(byte[] key) {
    int token = enter();
    try {
      map.remove(key);
    } finally {
      gate.exit(token);
    }
  }

  @Override
  protected void doWrite(WriteBatch batch) {
    throw new UnsupportedOperationException("engine 'chronicle-map' does not support ATOMIC_BATCH");
  }

  @Override
  protected AbstractCursor doScan(KeyRange range) {
    throw new UnsupportedOperationException("engine 'chronicle-map' does not support ORDERED_SCAN");
  }

  @Override
  protected void doSync() {
    int token = enter();
    try {
      Peers.forceAll(dir, ENGINE);
    } finally {
      gate.exit(token);
    }
  }

  @Override
  protected StoreStats doStats() {
    int token = enter();
    try {
      return new StoreStats(map.longSize(), true, Peers.bytes(dir), Map.of());
    } finally {
      gate.exit(token);
    }
  }

  @Override
  protected void doClose() {
    gate.close(); // waits for calls in flight: the map's off-heap memory goes with close
    try {
      map.close();
      if (!info().readOnly()) {
        Files.createFile(dir.resolve(CLEAN));
      }
    } catch (IOException e) {
      throw new StoreIOException("engine 'chronicle-map': cannot mark " + dir + " closed", e);
    } finally {
      lock.close();
    }
  }
}
