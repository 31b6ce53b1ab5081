package io.kv4j.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Limits;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@link OpenReaders}: the cursors and snapshots a store tracks, counts and closes. */
class OpenReadersTest {
  @Test
  void close_closesEachReaderOnceEvenIfOneThrows() {
    ReaderStore store = new ReaderStore(true);
    Reader c1 = store.open(null);
    Reader c2 = store.open("cursor c2");
    Reader c3 = store.open(null);
    Reader s1 = store.openSnapshot("snapshot s1");
    Reader s2 = store.openSnapshot(null);
    Reader fromS2 = (Reader) ((AbstractSnapshot) s2).scan(KeyRange.all());
    assertThat(store.stats().figures())
        .containsEntry(AbstractStore.OPEN_CURSORS, 4)
        .containsEntry(AbstractStore.OPEN_SNAPSHOTS, 2);

    // Snapshots close first, so s1's failure is the one thrown; c2's rides along.
    assertThatThrownBy(store::close)
        .hasMessage("snapshot s1 failed to release")
        .satisfies(e -> assertThat(e.getSuppressed()).hasSize(1))
        .satisfies(e -> assertThat(e.getSuppressed()[0]).hasMessage("cursor c2 failed to release"));
    for (Reader r : new Reader[] {c1, c2, c3, s1, s2, fromS2}) {
      assertThat(r.releases()).as("%s released", r).isOne();
    }
    assertThat(store.openCursors()).isZero();
    assertThat(store.closes).as("the engine closed although a reader's release threw").isOne();

    store.close(); // already closed: nothing is released again
    for (Reader r : new Reader[] {c1, c2, c3, s1, s2, fromS2}) {
      assertThat(r.releases()).as("%s released after a second close", r).isOne();
    }
    assertThat(store.closes).isOne();
  }

  @Test
  void close_withReadersThatCloseCleanly_closesTheEngineLast() {
    ReaderStore store = new ReaderStore(true);
    Reader c = store.open(null);
    Reader s = store.openSnapshot(null);
    store.close();
    assertThat(c.releases()).isOne();
    assertThat(s.releases()).isOne();
    assertThat(store.closes).isOne();
  }

  @Test
  void add_afterTheStoreClosed_closesTheReaderAndThrows() {
    ReaderStore store = new ReaderStore(true);
    store.close();
    CountingCursor c = new CountingCursor(store, null);
    assertThatThrownBy(() -> store.readers().add(c))
        .isInstanceOf(StoreClosedException.class)
        .hasMessage("engine 'readers' at /test is closed");
    assertThat(c.releases()).isOne();
    CountingSnapshot s = new CountingSnapshot(store, null);
    assertThatThrownBy(() -> store.readers().add(s)).isInstanceOf(StoreClosedException.class);
    assertThat(s.releases()).isOne();
    assertThat(store.openCursors()).isZero();
  }

  @Test
  void remove_ofAClosedReader_dropsItFromTheCounts() {
    ReaderStore store = new ReaderStore(true);
    Reader c = store.open(null);
    Reader s = store.openSnapshot(null);
    ((CountingCursor) c).close();
    ((CountingSnapshot) s).close();
    assertThat(store.stats().figures())
        .containsEntry(AbstractStore.OPEN_CURSORS, 0)
        .containsEntry(AbstractStore.OPEN_SNAPSHOTS, 0);
    store.close();
    assertThat(c.releases()).isOne();
    assertThat(s.releases()).isOne();
  }

  @Test
  void counted_keepsTheEngineFiguresInOrderAndAddsTheCounts() {
    ReaderStore store = new ReaderStore(false);
    store.open(null);
    Map<String, Number> engine = new LinkedHashMap<>();
    engine.put("segments", 3);
    engine.put("bytes-written", 42L);
    StoreStats counted = store.readers().counted(new StoreStats(7, false, 99, engine), false);
    assertThat(counted.keyCount()).isEqualTo(7);
    assertThat(counted.keyCountExact()).isFalse();
    assertThat(counted.diskBytes()).isEqualTo(99);
    assertThat(counted.figures())
        .containsExactly(
            Map.entry("segments", 3),
            Map.entry("bytes-written", 42L),
            Map.entry(AbstractStore.OPEN_CURSORS, 1));
    assertThat(store.readers().counted(new StoreStats(0, true, 0, Map.of()), true).figures())
        .containsExactly(
            Map.entry(AbstractStore.OPEN_CURSORS, 1), Map.entry(AbstractStore.OPEN_SNAPSHOTS, 0));
    store.close();
  }

  /** A cursor or snapshot that counts its releases. */
  private interface Reader {
    int releases();
  }

  /** A reader's release: counted, and failing when the reader was opened to fail. */
  private static final class Release {
    private final String failure; // the exception message, or null to release cleanly
    private int count;

    Release(String failure) {
      this.failure = failure;
    }

    void run() {
      count++;
      if (failure != null) {
        throw new IllegalStateException(failure + " failed to release");
      }
    }

    @Override
    public String toString() {
      return failure == null ? "a reader" : failure;
    }
  }

  private static final class CountingCursor extends AbstractCursor implements Reader {
    private final Release release;

    CountingCursor(AbstractStore store, String failure) {
      super(store, KeyRange.all());
      this.release = new Release(failure);
    }

    @Override
    protected Entry advance() {
      return null;
    }

    @Override
    protected void release() {
      release.run();
    }

    @Override
    public int releases() {
      return release.count;
    }

    @Override
    public String toString() {
      return release.toString();
    }
  }

  private static final class CountingSnapshot extends AbstractSnapshot implements Reader {
    private final AbstractStore store;
    private final Release release;

    CountingSnapshot(AbstractStore store, String failure) {
      super(store);
      this.store = store;
      this.release = new Release(failure);
    }

    @Override
    protected byte[] doGet(byte[] key) {
      return null;
    }

    @Override
    protected AbstractCursor doScan(KeyRange range) {
      return new CountingCursor(store, null);
    }

    @Override
    protected void release() {
      release.run();
    }

    @Override
    public int releases() {
      return release.count;
    }

    @Override
    public String toString() {
      return release.toString();
    }
  }

  /** A store with nothing in it whose cursors and snapshots count their releases. */
  private static final class ReaderStore extends AbstractStore {
    private String nextFailure;
    int closes;

    ReaderStore(boolean snapshots) {
      super(
          new StoreInfo(
              "readers",
              snapshots
                  ? Set.of(Feature.ORDERED_SCAN, Feature.SNAPSHOT_READ)
                  : Set.of(Feature.ORDERED_SCAN),
              new Limits(511, 1 << 24),
              Durability.SYNC,
              "/test",
              false));
    }

    Reader open(String failure) {
      nextFailure = failure;
      return (Reader) scan(KeyRange.all());
    }

    Reader openSnapshot(String failure) {
      nextFailure = failure;
      return (Reader) snapshot();
    }

    @Override
    protected AbstractCursor doScan(KeyRange range) {
      return new CountingCursor(this, nextFailure);
    }

    @Override
    protected AbstractSnapshot doSnapshot() {
      return new CountingSnapshot(this, nextFailure);
    }

    @Override
    protected byte[] doGet(byte[] key) {
      return null;
    }

    @Override
    protected void doPut(byte[] key, byte[] value) {
      throw new UnsupportedOperationException("read-only test store");
    }

    @Override
    protected void doDelete(byte[] key) {
      throw new UnsupportedOperationException("read-only test store");
    }

    @Override
    protected void doWrite(WriteBatch batch) {
      throw new UnsupportedOperationException("read-only test store");
    }

    @Override
    protected void doSync() {}

    @Override
    protected StoreStats doStats() {
      return new StoreStats(0, true, 0, Map.of());
    }

    @Override
    protected void doClose() {
      closes++;
    }
  }
}
