package io.kv4j.tck;

import io.kv4j.Store;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The child JVM of rule 7.9. Opens the store from a config URI (the kit gives it {@code BUFFERED}),
 * then through the keyspace handle {@value #KEYSPACE} puts key {@code s/N}, calls the handle's
 * {@code sync()} and prints {@code ack N}, for N = 0, 1, ... until killed.
 */
public final class KeyspaceSyncWorker {
  /** The keyspace the worker writes and syncs through. */
  static final String KEYSPACE = "synced";

  private KeyspaceSyncWorker() {}

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
      Store ks = s.keyspace(KEYSPACE);
      out.println("ready");
      out.flush();
      // The parent kills this JVM within seconds; the limit only stops an orphan whose parent died.
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
      for (long n = 0; ; n++) {
        if (System.nanoTime() > deadline || out.checkError()) {
          System.err.println("keyspace sync worker: not killed within 10 minutes, or no parent");
          System.exit(3);
        }
        ks.put(key(n), value(seed, n));
        ks.sync();
        out.println("ack " + n);
        out.flush();
      }
    }
  }

  static byte[] key(long n) {
    return ("s/" + n).getBytes(StandardCharsets.UTF_8);
  }

  static byte[] value(long seed, long n) {
    SplittableRandom r = new SplittableRandom(seed * 31 + n);
    byte[] v = new byte[r.nextInt(1, 200)];
    r.nextBytes(v);
    return v;
  }
}
