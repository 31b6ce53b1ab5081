package io.kv4j.lmdb;

import static io.kv4j.lmdb.Lmdb.b;
import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LmdbGroupCommitTest {
  @TempDir Path dir;

  @Test
  void concurrentWrites_shareOneCommit() throws Exception {
    try (Store s =
        Stores.open(StoreConfig.builder("lmdb").path(dir).durability(Durability.SYNC).build())) {
      LmdbStore store = (LmdbStore) s;
      long before = Lmdb.figure(s, "last-txn-id");
      List<Thread> writers = new ArrayList<>();
      store.writerLock().lock();
      try {
        for (int t = 0; t < 4; t++) {
          int id = t;
          Thread th =
              new Thread(
                  () -> {
                    if (id == 3) {
                      s.write(new WriteBatch().put(b("batch1"), b("x")).put(b("batch2"), b("y")));
                    } else {
                      s.put(b("k" + id), b("v" + id));
                    }
                  });
          th.start();
          writers.add(th);
        }
        while (store.queuedWrites() < 4) {
          Thread.onSpinWait();
        }
      } finally {
        store.writerLock().unlock();
      }
      for (Thread th : writers) {
        th.join();
      }
      assertThat(Lmdb.figure(s, "last-txn-id")).isEqualTo(before + 1);
      assertThat(s.get(b("k0"))).isEqualTo(b("v0"));
      assertThat(s.get(b("k2"))).isEqualTo(b("v2"));
      assertThat(s.get(b("batch2"))).isEqualTo(b("y"));
      assertThat(s.stats().keyCount()).isEqualTo(5);
    }
  }

  @Test
  void groupThatOverflowsTheMap_retriesEachWriteAloneAndLosesNothing() throws Exception {
    try (Store s = Lmdb.open(dir, "map-size", "1MiB", "map-growth-step", "1MiB")) {
      Queue<Throwable> errors = new ConcurrentLinkedQueue<>();
      List<Thread> writers = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int id = t;
        Thread th =
            new Thread(
                () -> {
                  try {
                    for (int i = 0; i < 400; i++) {
                      s.put(b(id + "-" + i), LmdbMapGrowthTest.value(i, 3000));
                    }
                  } catch (Throwable e) {
                    errors.add(e);
                  }
                });
        th.start();
        writers.add(th);
      }
      for (Thread th : writers) {
        th.join();
      }
      assertThat(errors).isEmpty();
      assertThat(s.stats().keyCount()).isEqualTo(1600);
      assertThat(Lmdb.figure(s, "map-growths")).isPositive();
      for (int t = 0; t < 4; t++) {
        for (int i = 0; i < 400; i += 37) {
          assertThat(Arrays.equals(s.get(b(t + "-" + i)), LmdbMapGrowthTest.value(i, 3000)))
              .isTrue();
        }
      }
    }
  }
}
