package io.kv4j.tck;

import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.WriteBatch;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The child JVM of the crash rules. Opens the store from a config URI, then performs a
 * deterministic sequence of operations, printing {@code ack N} after operation N returned, until
 * killed. The parent recomputes the sequence to know what must be present.
 *
 * <p>Operation n: when {@code n % 4 == 3} and the engine has batches, a batch that puts {@code
 * b/n/0..7} and deletes {@code k/(n-3)}; otherwise a put of {@code k/n}. Values derive from the
 * seed and n; some are empty, some are 64 KiB.
 */
public final class CrashWorker {
  private CrashWorker() {}

  /**
   * Entry point.
   *
   * @param args config URI, seed
   */
  public static void main(String[] args) {
    String uri = args[0];
    long seed = Long.parseLong(args[1]);
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    try (Store s = GivenEngine.open(uri)) {
      boolean batches = s.info().has(Feature.ATOMIC_BATCH);
      out.println("ready");
      out.flush();
      // The parent kills this JVM within seconds; the limit only stops an orphan whose parent died.
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
      for (long n = 0; ; n++) {
        if (System.nanoTime() > deadline || out.checkError()) {
          System.err.println("crash worker: not killed within 10 minutes, or the parent is gone");
          System.exit(3);
        }
        if (isBatch(n, batches)) {
          WriteBatch b = new WriteBatch();
          for (int i = 0; i < 8; i++) {
            b.put(batchKey(n, i), value(seed, n));
          }
          b.delete(putKey(n - 3));
          s.write(b);
        } else {
          s.put(putKey(n), value(seed, n));
        }
        out.println("ack " + n);
        out.flush();
      }
    }
  }

  static boolean isBatch(long n, boolean batches) {
    return batches && n % 4 == 3;
  }

  static byte[] putKey(long n) {
    return ("k/" + n).getBytes(StandardCharsets.UTF_8);
  }

  static byte[] batchKey(long n, int i) {
    return ("b/" + n + "/" + i).getBytes(StandardCharsets.UTF_8);
  }

  static byte[] value(long seed, long n) {
    SplittableRandom r = new SplittableRandom(seed * 31 + n);
    int kind = r.nextInt(10);
    int len = kind == 0 ? 0 : kind == 1 ? 65536 : r.nextInt(1, 200);
    byte[] v = new byte[len];
    r.nextBytes(v);
    return v;
  }
}
