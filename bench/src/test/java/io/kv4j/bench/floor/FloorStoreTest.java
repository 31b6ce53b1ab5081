package io.kv4j.bench.floor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import io.kv4j.bench.Data;
import io.kv4j.bench.Instruments;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The floor read ceiling returns what was put, refuses what it does not do, and is opt-in. */
class FloorStoreTest {
  @TempDir Path dir;

  private Store open(String capacity) {
    return open("floor", capacity);
  }

  private Store open(String engine, String capacity) {
    return Stores.open(
        StoreConfig.builderFor(Instruments.provider(engine))
            .path(dir.resolve("f"))
            .durability(Durability.BUFFERED)
            .option("capacity", capacity)
            .build());
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @ParameterizedTest
  @ValueSource(strings = {"floor", "floor-crc"})
  void putGet_returnsTheNewestValue_acrossTableGrowth(String engine) {
    long seed = 7;
    SplittableRandom r = new SplittableRandom(seed);
    Map<Integer, byte[]> model = new HashMap<>();
    try (Store s = open(engine, "64MiB")) {
      for (int i = 0; i < 20_000; i++) {
        int k = r.nextInt(5_000);
        byte[] v = new byte[r.nextInt(300)];
        r.nextBytes(v);
        s.put(b("key-" + k), v);
        model.put(k, v);
      }
      for (int k = 0; k < 5_000; k++) {
        byte[] want = model.get(k);
        assertThat(s.get(b("key-" + k))).as("%s key %d (seed %d)", engine, k, seed).isEqualTo(want);
      }
      assertThat(s.get(b("absent"))).isNull();
      s.put(b("empty"), new byte[0]);
      assertThat(s.get(b("empty"))).isEmpty();
      assertThat(s.stats().keyCount()).isEqualTo(model.size() + 1);
      assertThat(s.info().engine()).isEqualTo(engine);
    }
  }

  @Test
  void checked_flippedBitInAValue_isReportedNotReturned() throws Exception {
    byte[] value = new byte[100];
    new SplittableRandom(9).nextBytes(value);
    try (Store s = open("floor-crc", "1MiB")) {
      s.put(b("k"), value);
      // The record: lengths (8 bytes), CRC32C (4), key (1), value. Flip one bit of the value's
      // last byte through the file: the store's mapping shares the page cache, so its get sees it.
      Path file = dir.resolve("f").resolve("floor.dat");
      try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
        ch.write(ByteBuffer.wrap(new byte[] {(byte) (value[99] ^ 0x10)}), 12 + 1 + 99);
      }
      assertThatThrownBy(() -> s.get(b("k")))
          .isInstanceOf(StoreCorruptedException.class)
          .hasMessageContaining("floor-crc")
          .hasMessageContaining("checksum mismatch")
          .hasMessageContaining(file.toString());
    }
  }

  @Test
  void full_failsThePutWithItsReason_andKeepsWhatIsStored() {
    try (Store s = open("64KiB")) {
      byte[] v = new byte[1000];
      int stored = 0;
      StoreIOException full = null;
      for (int i = 0; i < 100 && full == null; i++) {
        try {
          s.put(b("k" + i), v);
          stored++;
        } catch (StoreIOException e) {
          full = e;
        }
      }
      assertThat(full).isNotNull();
      assertThat(full.getMessage()).contains("floor", "floor.dat", "is full", "65536");
      for (int i = 0; i < stored; i++) {
        assertThat(s.get(b("k" + i))).as("key %d", i).isEqualTo(v);
      }
    }
  }

  @Test
  void getsDuringPuts_seeWholeValuesOfTheirOwnKey() throws Exception {
    Data data = new Data(16, 256, false, 3);
    try (Store s = open("256MiB")) {
      for (int i = 0; i < 2_000; i++) {
        s.put(data.key(i), data.value(i, i));
      }
      AtomicReference<Throwable> failure = new AtomicReference<>();
      Thread reader =
          new Thread(
              () -> {
                SplittableRandom r = new SplittableRandom(11);
                try {
                  for (int n = 0; n < 200_000; n++) {
                    long k = r.nextLong(2_000);
                    data.verify(k, s.get(data.key(k)));
                  }
                } catch (Throwable t) {
                  failure.set(t);
                }
              });
      reader.start();
      SplittableRandom w = new SplittableRandom(12);
      for (int n = 0; n < 100_000; n++) {
        long k = w.nextLong(4_000); // half overwrites, half new keys (the table grows)
        s.put(data.key(k), data.value(k, w.nextInt()));
      }
      reader.join();
      assertThat(failure.get()).isNull();
    }
  }

  @Test
  void whatItDoesNotDo_isRefusedByName() {
    try (Store s = open("1MiB")) {
      assertThatThrownBy(() -> s.delete(b("a")))
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("floor");
      assertThatThrownBy(() -> s.scan(KeyRange.all()))
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("ordered scans");
      assertThatThrownBy(() -> s.write(new WriteBatch().put(b("a"), b("1"))))
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("batches");
      assertThat(s.info().features()).isEmpty();
    }
    assertThatThrownBy(
            () ->
                Stores.open(
                    StoreConfig.builderFor(Instruments.provider("floor"))
                        .path(dir.resolve("sync"))
                        .durability(Durability.SYNC)
                        .build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("SYNC");
    Store s = open("1MiB");
    s.put(b("a"), b("1"));
    s.close();
    assertThatThrownBy(() -> s.get(b("a"))).isInstanceOf(StoreClosedException.class);
  }
}
