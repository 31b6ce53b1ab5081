package io.kv4j.hashlog;

import io.kv4j.Durability;
import io.kv4j.WriteBatch;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;

/**
 * A measuring harness for the reopen of issue #27, not a test (run it with {@code java -cp}, see
 * the module README): {@code <dir> <keys> <opens>}. If {@code dir} holds no store yet, loads {@code
 * keys} keys of 16 bytes with 100-byte random values in write batches of 1,000 ({@code BUFFERED})
 * and closes it; then opens it {@code opens} times in this JVM, printing per open the wall time,
 * the process's minor and major page faults, and its user and system CPU time (from {@code
 * /proc/self/stat}, Linux only).
 *
 * <p>The CPU time is the figure to compare builds by (run the builds' JVMs in turns on the same
 * directory): the wall time also carries the faults of heap pages touched for the first time, which
 * on a VM can cost several seconds of system time per gigabyte of index, in any build.
 */
final class ReopenDriver {
  private ReopenDriver() {}

  /** Entry point; see the class comment for the arguments. */
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]).resolve("hashlog");
    long keys = Long.parseLong(args[1]);
    int opens = Integer.parseInt(args[2]);
    if (!Files.exists(dir)) {
      long t0 = System.nanoTime();
      try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED)) {
        byte[] value = new byte[100];
        SplittableRandom r = new SplittableRandom(1);
        for (long i = 0; i < keys; i += 1000) {
          WriteBatch b = new WriteBatch();
          for (long j = i; j < Math.min(keys, i + 1000); j++) {
            r.nextBytes(value);
            b.put(UpdateDriver.key(j), value.clone());
          }
          s.write(b);
        }
      }
      System.out.printf("load %d keys: %.1f s%n", keys, (System.nanoTime() - t0) / 1e9);
    }
    for (int o = 0; o < opens; o++) {
      long[] before = processStat();
      long t0 = System.nanoTime();
      try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED)) {
        double seconds = (System.nanoTime() - t0) / 1e9;
        long[] after = processStat();
        boolean found = s.get(UpdateDriver.key(keys / 2)) != null;
        System.out.printf(
            "open %.2f s, minor faults %d, major faults %d, user %.2f s, system %.2f s,"
                + " hint entries replayed %d, a loaded key found: %s%n",
            seconds,
            after[0] - before[0],
            after[1] - before[1],
            (after[2] - before[2]) / 100.0,
            (after[3] - before[3]) / 100.0,
            TestStores.figure(s, "hint-entries-replayed"),
            found);
      }
    }
  }

  /**
   * Minor faults, major faults, user and system time in clock ticks (fields 10, 12, 14, 15 of
   * {@code /proc/self/stat}; USER_HZ is 100 on Linux).
   */
  private static long[] processStat() throws IOException {
    String stat = Files.readString(Path.of("/proc/self/stat"));
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return new long[] {
      Long.parseLong(f[7]), Long.parseLong(f[9]), Long.parseLong(f[11]), Long.parseLong(f[12])
    };
  }
}
