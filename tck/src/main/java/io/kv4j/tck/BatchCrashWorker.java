package io.kv4j.tck;

import io.kv4j.Store;
import io.kv4j.WriteBatch;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The child JVM of rules 7.3 and 7.7: writes large batches one after another until it is killed.
 * Before batch n it prints {@code in n <written>}; after {@code write} returned, {@code ack n
 * <nanos> <bytes>}: how long the write took and how many bytes this process handed to write calls
 * meanwhile (see {@link WriteProgress}; -1 where the system does not say), so that the parent can
 * aim its SIGKILL inside a batch by the engine's progress, or by time.
 *
 * <p>Batch n puts {@link #PUTS} keys {@code c/n/i} (values of 16 KiB, some empty) and deletes the
 * first {@link #DELETES} keys of batch n − 2. With keyspaces (rule 7.7), operation i goes to
 * keyspace {@link #keyspace(boolean, int)}: the store's own keys and seven named keyspaces, so the
 * batch spans eight keyspaces and a batch logged keyspace by keyspace has seven moments at which a
 * kill leaves part of it.
 */
public final class BatchCrashWorker {
  /** Puts in one batch. */
  static final int PUTS = 64;

  /** Deletes in one batch (of keys of the batch two before it). */
  static final int DELETES = 16;

  /** The keyspaces of a batch spanning keyspaces: the store's own and seven named ones. */
  static final int KEYSPACES = 8;

  private BatchCrashWorker() {}

  /**
   * Entry point.
   *
   * @param args config URI, seed, {@code plain} or {@code keyspaces}
   */
  public static void main(String[] args) {
    String uri = args[0];
    long seed = Long.parseLong(args[1]);
    boolean spaces = args[2].equals("keyspaces");
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    try (Store s = GivenEngine.open(uri)) {
      out.println("ready");
      out.flush();
      // The parent kills this JVM within seconds; the limit only stops an orphan whose parent died.
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
      for (long n = 0; ; n++) {
        if (System.nanoTime() > deadline || out.checkError()) {
          System.err.println("batch crash worker: not killed within 10 minutes, or no parent");
          System.exit(3);
        }
        WriteBatch b = batch(seed, n, spaces);
        long before = WriteProgress.ofThisProcess();
        out.println("in " + n + " " + before);
        out.flush();
        long start = System.nanoTime();
        s.write(b);
        long took = System.nanoTime() - start;
        long after = WriteProgress.ofThisProcess();
        long bytes = before < 0 || after < 0 ? -1 : after - before;
        out.println("ack " + n + " " + took + " " + bytes);
        out.flush();
      }
    }
  }

  /** Batch {@code n}: its puts, then its deletes. */
  static WriteBatch batch(long seed, long n, boolean spaces) {
    WriteBatch b = new WriteBatch();
    for (int i = 0; i < PUTS; i++) {
      String ks = keyspace(spaces, i);
      if (ks == null) {
        b.put(key(n, i), value(seed, n, i));
      } else {
        b.put(ks, key(n, i), value(seed, n, i));
      }
    }
    if (n >= 2) {
      for (int i = 0; i < DELETES; i++) {
        String ks = keyspace(spaces, i);
        if (ks == null) {
          b.delete(key(n - 2, i));
        } else {
          b.delete(ks, key(n - 2, i));
        }
      }
    }
    return b;
  }

  /** The keyspace of operation {@code i}: null for the store's own keys. */
  static String keyspace(boolean spaces, int i) {
    int k = i % KEYSPACES;
    return !spaces || k == 0 ? null : "crash-" + k;
  }

  static byte[] key(long n, int i) {
    return ("c/" + n + "/" + i).getBytes(StandardCharsets.UTF_8);
  }

  static byte[] value(long seed, long n, int i) {
    SplittableRandom r = new SplittableRandom(seed * 1_000_003L + n * 131 + i);
    byte[] v = new byte[i % 16 == 5 ? 0 : 16 << 10];
    r.nextBytes(v);
    return v;
  }
}
