package io.kv4j.hashlog;

import io.kv4j.Durability;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.SplittableRandom;

/**
 * A measuring harness for the read bar of issue #27, not a test (run it with {@code java -cp}, see
 * the module README): {@link UpdateDriver#KEYS} keys of 16 bytes with 1 KiB values, loaded into a
 * {@code BUFFERED} hashlog store and into a copy of the bench's {@code floor} read ceiling (one
 * mapping, one open-addressing {@code long[]} index, no checksum, no guard) and into that floor
 * with a CRC32C of key and value checked on every get, then uniform gets on one thread, the three
 * taking turns every {@code batch} gets (the order rotating), in one JVM.
 *
 * <p>{@code <seconds> <batch>}: prints the medians of the batches' nanoseconds per get and
 * hashlog's ratio to each floor. A batch in which the thread lost the CPU is an outlier the median
 * ignores, so this resolves a few percent on a machine loaded by other processes, where the rates
 * of timed windows spread 0.5x to 2x. Only the ratio means anything there. To compare two builds,
 * run each alternately (the floor is the same code in both, so it cancels the load of the minute).
 * The bench's own floor figure also carries the bench's per-get timing, so its ratio is a little
 * closer to 1.
 */
final class ReadDriver {
  private ReadDriver() {}

  /** A get under measurement. */
  private interface Reader {
    byte[] get(byte[] key);
  }

  /** Entry point; see the class comment for the arguments. */
  public static void main(String[] args) throws Exception {
    fine(
        Double.parseDouble(args[0]),
        Integer.parseInt(args[1]),
        args.length > 2 ? Integer.parseInt(args[2]) : 0);
  }

  /**
   * One thread alternates hashlog and floor every {@code batch} gets and times each batch; the
   * medians of the batches' nanoseconds per get are compared. A batch in which the thread lost the
   * CPU is an outlier the median ignores, so this resolves a few percent on a machine too loaded
   * for window rates.
   */
  private static void fine(double seconds, int batch, int churn) throws Exception {
    Path dir = Files.createTempDirectory("hashlog-read");
    try (HashLogStore s = TestStores.open(dir.resolve("hashlog"), Durability.BUFFERED);
        Floor floor = new Floor(dir.resolve("floor.dat"), false);
        Floor checked = new Floor(dir.resolve("floor-crc.dat"), true)) {
      UpdateDriver.load(s);
      churn(s, churn);
      byte[] value = new byte[UpdateDriver.VALUE];
      SplittableRandom r = new SplittableRandom(1);
      for (int i = 0; i < UpdateDriver.KEYS; i++) {
        r.nextBytes(value);
        floor.put(UpdateDriver.key(i), value);
        checked.put(UpdateDriver.key(i), value);
      }
      Reader[] all = {s::get, floor::get, checked::get};
      for (int round = 0; round < 2; round++) { // the first round warms up, the second counts
        int max = 3_000_000;
        long[][] ns = new long[3][max];
        int n = 0;
        SplittableRandom rnd = new SplittableRandom(7);
        long until = System.nanoTime() + (long) (seconds * 1e9);
        while (n < max && System.nanoTime() < until) {
          for (int e = 0; e < 3; e++) {
            int which = (n + e) % 3; // rotate which goes first
            Reader g = all[which];
            long t0 = System.nanoTime();
            for (int i = 0; i < batch; i++) {
              long k = rnd.nextLong(UpdateDriver.KEYS);
              byte[] v = g.get(UpdateDriver.key(k));
              if (v == null || v.length != UpdateDriver.VALUE) {
                throw new AssertionError("key " + k + " missing or short");
              }
            }
            ns[which][n] = System.nanoTime() - t0;
          }
          n++;
        }
        long[] h = java.util.Arrays.copyOf(ns[0], n);
        long[] f = java.util.Arrays.copyOf(ns[1], n);
        long[] c = java.util.Arrays.copyOf(ns[2], n);
        java.util.Arrays.sort(h);
        java.util.Arrays.sort(f);
        java.util.Arrays.sort(c);
        if (round == 1) {
          System.out.printf(
              "fine: %d batches of %d gets each; median ns/get hashlog %.1f, floor %.1f,"
                  + " floor+crc %.1f; hashlog/floor rate %.3f (quartiles %.3f .. %.3f);"
                  + " hashlog/(floor+crc) rate %.3f (quartiles %.3f .. %.3f)%n",
              n,
              batch,
              h[n / 2] / (double) batch,
              f[n / 2] / (double) batch,
              c[n / 2] / (double) batch,
              f[n / 2] / (double) h[n / 2],
              f[n / 4] / (double) h[n / 4],
              f[3 * n / 4] / (double) h[3 * n / 4],
              c[n / 2] / (double) h[n / 2],
              c[n / 4] / (double) h[n / 4],
              c[3 * n / 4] / (double) h[3 * n / 4]);
        }
      }
    } finally {
      UpdateDriver.deleteTree(dir);
    }
  }

  /**
   * Overwrites every key {@code passes} times in random order, as the bench's update scenarios do
   * before its reads, then waits for background compaction to go idle: the reads then meet a store
   * whose segments are mostly compaction outputs.
   */
  private static void churn(HashLogStore s, int passes) {
    if (passes == 0) {
      return;
    }
    SplittableRandom r = new SplittableRandom(3);
    byte[] value = new byte[UpdateDriver.VALUE];
    for (long i = 0; i < (long) passes * UpdateDriver.KEYS; i++) {
      r.nextBytes(value);
      s.put(UpdateDriver.key(r.nextLong(UpdateDriver.KEYS)), value);
    }
    s.compactor.awaitIdle();
    System.out.printf("churn: %d passes, then %s%n", passes, s.stats().figures());
  }

  /**
   * The bench's {@code floor} store ({@code io.kv4j.bench.floor.FloorStore}) cut to a single loader
   * and gets, copied since this module cannot depend on the bench (the bench depends on it):
   * records {@code [key length, value length, key, value]} back to back in one mapping, open
   * addressing over {@code [hash, offset + 1]} pairs at load below 1/2. With {@code checked}, each
   * record also carries the CRC32C of its key and value (12-byte header, like hashlog's), which a
   * get checks on the copied value: the floor plus the least a verifying engine must do, so that
   * hashlog's ratio to it shows what hashlog costs beyond the check itself.
   */
  private static final class Floor implements AutoCloseable {
    private static final VarHandle LONG_BE =
        MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
    private final FileChannel channel;
    private final MappedByteBuffer map;
    private final long[] table = new long[2 * Integer.highestOneBit(UpdateDriver.KEYS * 4)];
    private int end;
    private final boolean checked;
    private final int header;

    Floor(Path file, boolean checked) throws IOException {
      this.checked = checked;
      this.header = checked ? 12 : 8;
      channel =
          FileChannel.open(
              file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
      map =
          channel.map(
              FileChannel.MapMode.READ_WRITE,
              0,
              (long) UpdateDriver.KEYS * (12 + 16 + UpdateDriver.VALUE));
    }

    static long hash(byte[] key) {
      long h = 0x9E3779B97F4A7C15L ^ key.length;
      int i = 0;
      for (; i + 8 <= key.length; i += 8) {
        h = (h ^ (long) LONG_BE.get(key, i)) * 0xC2B2AE3D27D4EB4FL;
      }
      for (; i < key.length; i++) {
        h = (h ^ (key[i] & 0xFF)) * 0x100000001B3L;
      }
      h ^= h >>> 33;
      h *= 0xFF51AFD7ED558CCDL;
      h ^= h >>> 33;
      return h | 1;
    }

    private boolean keyAt(int off, byte[] key) {
      if (map.getInt(off) != key.length) {
        return false;
      }
      int p = off + header;
      int i = 0;
      for (; i + 8 <= key.length; i += 8) {
        if (map.getLong(p + i) != (long) LONG_BE.get(key, i)) {
          return false;
        }
      }
      for (; i < key.length; i++) {
        if (map.get(p + i) != key[i]) {
          return false;
        }
      }
      return true;
    }

    void put(byte[] key, byte[] value) {
      int off = end;
      map.putInt(off, key.length);
      map.putInt(off + 4, value.length);
      if (checked) {
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(key);
        crc.update(value);
        map.putInt(off + 8, (int) crc.getValue());
      }
      map.put(off + header, key);
      map.put(off + header + key.length, value);
      end = off + header + key.length + value.length;
      long h = hash(key);
      int mask = (table.length >> 1) - 1;
      int i = (int) (h ^ (h >>> 32)) & mask;
      while (table[2 * i] != 0) {
        i = (i + 1) & mask;
      }
      table[2 * i + 1] = off + 1L;
      table[2 * i] = h;
    }

    byte[] get(byte[] key) {
      long h = hash(key);
      long[] t = table;
      int mask = (t.length >> 1) - 1;
      int i = (int) (h ^ (h >>> 32)) & mask;
      for (int probes = 0; probes <= mask; probes++) {
        long w = t[2 * i];
        if (w == 0) {
          return null;
        }
        if (w == h) {
          long off = t[2 * i + 1];
          if (off != 0 && keyAt((int) (off - 1), key)) {
            int o = (int) off - 1;
            int v = map.getInt(o + 4);
            byte[] out = new byte[v];
            map.get(o + header + key.length, out, 0, v);
            if (checked) {
              java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
              crc.update(key, 0, key.length);
              crc.update(out, 0, v);
              if ((int) crc.getValue() != map.getInt(o + 8)) {
                throw new IllegalStateException("checksum mismatch at " + o);
              }
            }
            return out;
          }
        }
        i = (i + 1) & mask;
      }
      return null;
    }

    @Override
    public void close() throws IOException {
      channel.close();
    }
  }
}
