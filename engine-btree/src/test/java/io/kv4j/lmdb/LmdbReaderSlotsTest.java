package io.kv4j.lmdb;

import static io.kv4j.lmdb.Lmdb.b;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Cursor;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LmdbReaderSlotsTest {
  @TempDir Path dir;

  /**
   * 400 threads, each reading and scanning and then dying, 8 at a time, against 32 reader slots. A
   * transaction per thread (the usual ThreadLocal approach) would need 400 slots and fail with
   * MDB_READERS_FULL; pooled transactions keep the high-water mark near the concurrency.
   */
  @Test
  void manyShortLivedThreads_keepReaderSlotsBounded() throws Exception {
    int waves = 50;
    int perWave = 8;
    try (Store s = Lmdb.open(dir, "max-readers", "32")) {
      for (int i = 0; i < 100; i++) {
        s.put(b("k" + i), b("v" + i));
      }
      Queue<Throwable> errors = new ConcurrentLinkedQueue<>();
      for (int w = 0; w < waves; w++) {
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < perWave; t++) {
          Thread th =
              new Thread(
                  () -> {
                    try {
                      for (int i = 0; i < 100; i++) {
                        if (!Arrays.equals(s.get(b("k" + i)), b("v" + i))) {
                          throw new AssertionError("bad value for k" + i);
                        }
                      }
                      try (Cursor c = s.scan(KeyRange.prefix(b("k1")))) {
                        c.forEachRemaining(e -> {});
                      }
                    } catch (Throwable e) {
                      errors.add(e);
                    }
                  });
          th.start();
          threads.add(th);
        }
        for (Thread th : threads) {
          th.join();
        }
      }
      assertThat(errors).isEmpty();
      // Slots: the pool keeps at most max-readers/2 = 16 idle transactions; at most 8 threads read
      // at once (each with at most one transaction), so at most 16 + 8 slots were ever taken.
      assertThat(Lmdb.figure(s, "reader-slots-in-use")).isLessThanOrEqualTo(16);
      assertThat(Lmdb.figure(s, "reader-slots-high-water"))
          .isLessThanOrEqualTo(16 + perWave)
          .isLessThan((long) waves * perWave);
    }
  }

  @Test
  void allSlotsTaken_givesAMessageNamingMaxReaders() {
    try (Store s = Lmdb.open(dir, "max-readers", "8")) {
      s.put(b("k"), b("v"));
      List<Cursor> open = new ArrayList<>();
      try {
        assertThatThrownBy(
                () -> {
                  for (int i = 0; i < 9; i++) {
                    open.add(s.scan(KeyRange.all()));
                  }
                })
            .isInstanceOf(StoreException.class)
            .hasMessageContaining("max-readers");
      } finally {
        open.forEach(Cursor::close);
      }
      // Slots come back once cursors close.
      assertThat(s.get(b("k"))).isEqualTo(b("v"));
      try (Cursor c = s.scan(KeyRange.all())) {
        assertThat(c.next().key()).isEqualTo(b("k"));
      }
    }
  }

  /**
   * Every read that borrows a transaction says the same when none is left, not lmdbjava's error.
   */
  @Test
  void allSlotsTaken_getGetAllAndStatsFailWithTheMaxReadersMessage() {
    try (Store s = Lmdb.open(dir, "max-readers", "8")) {
      s.put(b("k"), b("v"));
      List<Cursor> open = new ArrayList<>();
      try {
        boolean full = false;
        for (int i = 0; i < 16 && !full; i++) {
          try {
            open.add(s.scan(KeyRange.all()));
          } catch (StoreException e) {
            full = true;
          }
        }
        assertThat(full).as("8 slots run out before 16 cursors").isTrue();
        assertThatThrownBy(() -> s.get(b("k")))
            .isInstanceOf(StoreException.class)
            .hasMessageContaining("max-readers");
        assertThatThrownBy(() -> s.getAll(List.of(b("k"), b("x"))))
            .isInstanceOf(StoreException.class)
            .hasMessageContaining("max-readers");
        assertThatThrownBy(s::stats)
            .isInstanceOf(StoreException.class)
            .hasMessageContaining("max-readers");
      } finally {
        open.forEach(Cursor::close);
      }
      // Each failed read left the gates: writes and reads go on, and close does not wait.
      s.put(b("k2"), b("v2"));
      assertThat(s.getAll(List.of(b("k"), b("k2")))).containsExactly(b("v"), b("v2"));
      assertThat(s.stats().keyCount()).isEqualTo(2);
    }
  }
}
