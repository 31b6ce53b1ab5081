package io.kv4j.lmdb;

import static io.kv4j.lmdb.Lmdb.b;
import static io.kv4j.lmdb.Lmdb.s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Cursor;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.Snapshot;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LmdbCapabilityTest {
  @TempDir Path dir;
  @TempDir Path out;

  private static byte[] num(long n) {
    return ByteBuffer.allocate(8).putLong(n).array();
  }

  private static long num(byte[] b) {
    return ByteBuffer.wrap(b).getLong();
  }

  @Test
  void replace_concurrentWithPlainWritesInGroupCommits_losesNoIncrement() throws Exception {
    int threads = 6;
    int perThread = 300;
    ExecutorService pool = Executors.newFixedThreadPool(threads + 2);
    try (Store store = Lmdb.open(dir)) {
      store.put(b("counter"), num(0));
      AtomicBoolean stop = new AtomicBoolean();
      List<Future<?>> noise = new ArrayList<>();
      for (int t = 0; t < 2; t++) {
        int id = t;
        noise.add(
            pool.submit(
                () -> {
                  for (int i = 0; !stop.get(); i++) {
                    store.put(b("noise-" + id + "-" + (i % 50)), num(i));
                    if (i % 7 == 0) {
                      store.write(new WriteBatch().put(b("batch-" + id), num(i)).delete(b("x")));
                    }
                  }
                  return null;
                }));
      }
      List<Future<Integer>> incs = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        incs.add(
            pool.submit(
                () -> {
                  int retries = 0;
                  for (int i = 0; i < perThread; i++) {
                    while (true) {
                      byte[] cur = store.get(b("counter"));
                      if (store.replace(b("counter"), cur, num(num(cur) + 1))) {
                        break;
                      }
                      retries++;
                    }
                  }
                  return retries;
                }));
      }
      for (Future<Integer> f : incs) {
        f.get(120, TimeUnit.SECONDS);
      }
      stop.set(true);
      for (Future<?> f : noise) {
        f.get(120, TimeUnit.SECONDS);
      }
      assertThat(num(store.get(b("counter")))).isEqualTo((long) threads * perThread);
      assertThat(store.putIfAbsent(b("counter"), num(1))).isFalse();
      assertThat(store.delete(b("counter"), num(1))).isFalse();
      assertThat(store.delete(b("counter"), num((long) threads * perThread))).isTrue();
      assertThat(store.get(b("counter"))).isNull();
      assertThat(store.putIfAbsent(b("counter"), num(7))).isTrue();
    } finally {
      pool.shutdownNow();
    }
    try (Store store = Lmdb.open(dir)) {
      assertThat(num(store.get(b("counter")))).isEqualTo(7);
      store.verify();
    }
  }

  @Test
  void snapshot_readFromManyThreads_seesOnePointInTime() throws Exception {
    long seed = new Random().nextLong();
    Random rnd = new Random(seed);
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try (Store store = Lmdb.open(dir)) {
      for (int i = 0; i < 200; i++) {
        store.put(b(String.format("k%03d", i)), b("old" + i));
      }
      try (Snapshot snap = store.snapshot()) {
        for (int i = 0; i < 200; i++) {
          store.put(b(String.format("k%03d", i)), b("new" + i));
        }
        store.put(b("k999"), b("later"));
        List<Future<?>> readers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
          long threadSeed = rnd.nextLong();
          readers.add(
              pool.submit(
                  () -> {
                    Random r = new Random(threadSeed);
                    for (int round = 0; round < 50; round++) {
                      int i = r.nextInt(200);
                      assertThat(s(snap.get(b(String.format("k%03d", i)))))
                          .as("seed %d", seed)
                          .isEqualTo("old" + i);
                      assertThat(snap.getAll(List.of(b("k000"), b("k999"), b("k199"))))
                          .as("seed %d", seed)
                          .containsExactly(b("old0"), null, b("old199"));
                      if (round % 10 == 0) {
                        int n = 0;
                        try (Cursor c = snap.scan(KeyRange.all())) {
                          while (c.hasNext()) {
                            Entry e = c.next();
                            assertThat(s(e.value())).startsWith("old");
                            n++;
                          }
                        }
                        assertThat(n).as("seed %d", seed).isEqualTo(200);
                      }
                    }
                    return null;
                  }));
        }
        for (Future<?> f : readers) {
          f.get(120, TimeUnit.SECONDS);
        }
      }
      assertThat(store.getAll(List.of(b("k000"), b("k999"), b("nope"))))
          .containsExactly(b("new0"), b("later"), null);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void snapshot_openWhenStoreCloses_failsCleanlyAndFreesItsReader() throws Exception {
    Store store = Lmdb.open(dir);
    store.put(b("a"), b("1"));
    store.put(b("b"), b("2"));
    Snapshot snap = store.snapshot();
    Cursor cursor = snap.scan(KeyRange.all());
    assertThat(cursor.next().key()).isEqualTo(b("a"));
    store.close();
    assertThatThrownBy(() -> snap.get(b("a"))).isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(cursor::next).isInstanceOf(RuntimeException.class);
    snap.close(); // idempotent after the store closed it
    cursor.close();
    try (Store again = Lmdb.open(dir)) {
      try (Snapshot s2 = again.snapshot()) {
        assertThat(s2.get(b("b"))).isEqualTo(b("2"));
      }
      assertThat(Lmdb.figure(again, "reader-slots-in-use")).isLessThanOrEqualTo(1);
    }
  }

  @Test
  void snapshot_inUseByThreadsWhileStoreCloses_neverCrashesAndFailsClosed() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      for (int round = 0; round < 5; round++) {
        Store store = Lmdb.open(dir);
        for (int i = 0; i < 300; i++) {
          store.put(num(i), b("v" + i));
        }
        Snapshot snap = store.snapshot();
        // Every reader is well into its loop before the close, so each one meets it mid-use.
        CountDownLatch started = new CountDownLatch(4);
        List<Future<Integer>> readers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
          int id = t;
          readers.add(
              pool.submit(
                  () -> {
                    int reads = 0;
                    try {
                      while (true) {
                        if (id % 2 == 0) {
                          assertThat(snap.get(num(reads % 300))).isEqualTo(b("v" + reads % 300));
                        } else {
                          try (Cursor c = snap.scan(KeyRange.all())) {
                            while (c.hasNext()) {
                              c.next();
                            }
                          }
                        }
                        reads++;
                        if (reads == 20) {
                          started.countDown();
                        }
                      }
                    } catch (StoreClosedException | IllegalStateException e) {
                      return reads; // the store closed under us: the one allowed outcome
                    }
                  }));
        }
        assertThat(started.await(120, TimeUnit.SECONDS)).isTrue();
        store.close();
        for (Future<Integer> f : readers) {
          assertThat(f.get(120, TimeUnit.SECONDS)).isGreaterThanOrEqualTo(20);
        }
        assertThatThrownBy(() -> snap.get(num(1))).isInstanceOf(StoreClosedException.class);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void snapshot_heldByTheWritingThread_blocksMapGrowthUntilClosed() throws Exception {
    try (Store store = Lmdb.open(dir, "map-size", "1m", "map-growth-step", "4m")) {
      store.put(b("a"), b("1"));
      byte[] big = new byte[2 << 20];
      Snapshot snap = store.snapshot();
      assertThatThrownBy(() -> store.put(b("big"), big))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("map-size");
      assertThat(snap.get(b("big"))).isNull();
      snap.close();
      store.put(b("big"), big);
      assertThat(store.get(b("big"))).hasSize(big.length);
      assertThat(Lmdb.figure(store, "map-growths")).isGreaterThanOrEqualTo(1);
    }
  }

  @Test
  void backup_whileWriting_opensAsTheSameStoreAndVerifies() throws Exception {
    Path copy = out.resolve("copy");
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try (Store store = Lmdb.open(dir)) {
      AtomicBoolean stop = new AtomicBoolean();
      // Each batch writes key i and moves "last" to i, atomically: a consistent copy holds keys
      // 0..last and nothing above.
      Future<?> writer =
          pool.submit(
              () -> {
                for (long i = 0; !stop.get() || i < 500; i++) {
                  store.write(new WriteBatch().put(num(i), b("v" + i)).put(b("last"), num(i)));
                }
                return null;
              });
      while (store.get(b("last")) == null || num(store.get(b("last"))) < 200) {
        Thread.onSpinWait();
      }
      store.backup(copy);
      stop.set(true);
      writer.get(120, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
    }
    assertThat(copy.resolve("kv4j.store")).exists();
    assertThat(Files.readAllBytes(copy.resolve("kv4j.store")))
        .isEqualTo(Files.readAllBytes(dir.resolve("kv4j.store")));
    try (Store c = Lmdb.open(copy)) {
      c.verify();
      long last = num(c.get(b("last")));
      assertThat(last).isGreaterThanOrEqualTo(200);
      for (long i = 0; i <= last; i++) {
        assertThat(c.get(num(i))).isEqualTo(b("v" + i));
      }
      assertThat(c.get(num(last + 1))).isNull();
      assertThat(c.info().features()).contains(io.kv4j.Feature.CHECKSUMS);
      c.put(b("after"), b("x")); // writable, grows like any store
      assertThat(c.get(b("after"))).isEqualTo(b("x"));
    }
  }

  @Test
  void backup_ofReadOnlyStoreWithoutLockFile_andRawFormat_keepsTheFormat() throws Exception {
    try (Store s = Lmdb.open(dir, "checksums", "false")) {
      for (int i = 0; i < 1000; i++) {
        s.put(num(i), new byte[100 + i % 50]);
      }
      for (int i = 0; i < 1000; i += 2) {
        s.delete(num(i)); // free pages the compacting copy leaves out
      }
    }
    Files.delete(dir.resolve("lock.mdb"));
    Path copy = out.resolve("ro-copy");
    try (Store ro = Stores.open(Lmdb.config(dir).readOnly(true).build())) {
      ro.backup(copy);
    }
    assertThat(Files.size(copy.resolve("data.mdb")))
        .isLessThan(Files.size(dir.resolve("data.mdb")));
    try (Store c = Stores.open(Lmdb.config(copy, "checksums", "false").readOnly(true).build())) {
      c.verify();
      assertThat(c.info().features()).doesNotContain(io.kv4j.Feature.CHECKSUMS);
      assertThat(c.get(num(1))).hasSize(101);
      assertThat(c.get(num(2))).isNull();
    }
    try (Store c = Lmdb.open(copy)) {
      c.verify();
      assertThat(c.stats().keyCount()).isEqualTo(500);
    }
  }
}
