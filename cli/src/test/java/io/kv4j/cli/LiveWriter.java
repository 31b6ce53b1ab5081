package io.kv4j.cli;

import io.kv4j.Store;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

/**
 * Child process of {@link VerifyLiveStoreTest}: fills a store, prints {@code ready}, then rewrites
 * it in batches until killed — values change, keys come and go, so the key count moves — printing
 * {@code batches N} every 50 batches.
 */
final class LiveWriter {
  static final int KEYS = 2_000;

  private LiveWriter() {}

  /** {@code <uri> <seed>}. */
  public static void main(String[] args) {
    SplittableRandom rnd = new SplittableRandom(Long.parseLong(args[1]));
    try (Store s = Stores.open(args[0])) {
      WriteBatch fill = new WriteBatch();
      for (int k = 0; k < KEYS; k++) {
        fill.put(key(k), value(k, 0));
      }
      s.write(fill);
      System.out.println("ready");
      System.out.flush();
      for (long n = 1; ; n++) {
        WriteBatch b = new WriteBatch();
        for (int i = 0; i < 50; i++) {
          int k = rnd.nextInt(KEYS);
          if (rnd.nextInt(4) == 0) {
            b.delete(key(k));
          } else {
            b.put(key(k), value(k, n));
          }
        }
        s.write(b);
        if (n % 50 == 0) {
          System.out.println("batches " + n);
          System.out.flush();
        }
      }
    }
  }

  static byte[] key(int k) {
    return String.format("key-%05d", k).getBytes(StandardCharsets.UTF_8);
  }

  static byte[] value(int k, long round) {
    return ("value of " + k + " in batch " + round + " " + "x".repeat(k % 200))
        .getBytes(StandardCharsets.UTF_8);
  }
}
