package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.WriteBatch;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConcurrentReadWriteTest {
  @TempDir Path dir;

  private static byte[] key(int i) {
    return ByteBuffer.allocate(4).putInt(i).array();
  }

  /** A value that names its key and version, so a reader can tell a wrong or torn value. */
  private static byte[] value(int key, int version) {
    int len = 8 + (version * 31 + key) % 200;
    ByteBuffer b = ByteBuffer.allocate(len).putInt(key).putInt(version);
    while (b.hasRemaining()) {
      b.put((byte) (key ^ version));
    }
    return b.array();
  }

  private static String check(byte[] k, byte[] v) {
    int key = ByteBuffer.wrap(k).getInt();
    if (v.length < 8) {
      return "short value for " + key;
    }
    int owner = ByteBuffer.wrap(v).getInt();
    int version = ByteBuffer.wrap(v).getInt(4);
    return owner == key && Arrays.equals(v, value(key, version))
        ? null
        : "value of key " + owner + " v" + version + " returned for key " + key;
  }

  @Test
  void readersAndScansDuringWritesAndRolls_seeOnlyWholeValuesOfTheirOwnKey() throws Exception {
    int keys = 500;
    long seed = 2026;
    ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
    AtomicBoolean stop = new AtomicBoolean();
    try (HashLogStore s =
        TestStores.open(
            dir,
            Durability.BUFFERED,
            (KeyDir.Hasher) k -> k[3] & 7, // heavy collisions: probes race with shifts
            "segment-size",
            "16KiB")) {
      Thread writer =
          new Thread(
              () -> {
                SplittableRandom r = new SplittableRandom(seed);
                for (int version = 0; version < 20_000; version++) {
                  int k = r.nextInt(keys);
                  int op = r.nextInt(10);
                  if (op < 6) {
                    s.put(key(k), value(k, version));
                  } else if (op < 8) {
                    s.delete(key(k));
                  } else {
                    int k2 = r.nextInt(keys);
                    s.write(new WriteBatch().put(key(k), value(k, version)).delete(key(k2)));
                  }
                }
                stop.set(true);
              });
      Runnable reader =
          () -> {
            SplittableRandom r = new SplittableRandom(seed + 1);
            while (!stop.get()) {
              byte[] k = key(r.nextInt(keys));
              byte[] v = s.get(k);
              if (v != null) {
                String e = check(k, v);
                if (e != null) {
                  errors.add(e);
                }
              }
            }
          };
      Runnable scanner =
          () -> {
            while (!stop.get()) {
              byte[] prev = null;
              try (Cursor c = s.scan(KeyRange.all())) {
                while (c.hasNext()) {
                  Entry e = c.next();
                  if (prev != null && Arrays.compareUnsigned(prev, e.key()) >= 0) {
                    errors.add("scan out of order or repeated key");
                  }
                  String err = check(e.key(), e.value());
                  if (err != null) {
                    errors.add("scan: " + err);
                  }
                  prev = e.key();
                }
              }
            }
          };
      List<Thread> threads =
          List.of(writer, new Thread(reader), new Thread(reader), new Thread(scanner));
      threads.forEach(Thread::start);
      for (Thread t : threads) {
        t.join();
      }
      assertThat(errors).as("seed " + seed).isEmpty();
      assertThat(TestStores.figure(s, "segments")).isGreaterThan(3);
    }
  }
}
