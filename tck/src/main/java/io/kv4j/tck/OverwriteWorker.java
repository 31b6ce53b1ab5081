package io.kv4j.tck;

import io.kv4j.Store;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The child JVM of rule 7.5: {@value #THREADS} threads overwrite keys of their own in a tight loop
 * until killed. Thread t's operation n puts {@code o/t/(n % KEYS)} with a {@value #VALUE_LENGTH}
 * -byte value derived from the seed, t and n, so every key is rewritten again and again with a
 * value of the same size (what an engine that updates in place overwrites in place).
 *
 * <p>After operation n returns, thread t stores n with release semantics into its slot of a
 * memory-mapped acknowledgement file. A store into a shared mapping lands in the page cache, so it
 * outlives SIGKILL, and costs no system call; the values are computed before the loop. So the loop
 * is the engine's own put, and a kill lands inside it rather than in a print; with several threads,
 * one of them is likely to be inside a put's critical moment. Release ordering means a number is
 * never visible before the put it counts has returned.
 */
public final class OverwriteWorker {
  /** Writer threads, each with its own keys and acknowledgement slot. */
  static final int THREADS = 4;

  /** How many keys each thread cycles over. */
  static final int KEYS = 16;

  /** The length of every value. */
  static final int VALUE_LENGTH = 1024;

  /** Distinct values per thread: a value repeats after this many operations of its thread. */
  static final int PERIOD = 64 * KEYS;

  /** A slot holds -1 until its thread's first operation returns. */
  static final long NONE = -1;

  /** Bytes between two slots, so the threads do not share a cache line. */
  private static final int SLOT = 64;

  private static final VarHandle LONG =
      MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

  private OverwriteWorker() {}

  /**
   * Entry point.
   *
   * @param args config URI, seed, acknowledgement file
   * @throws Exception if the acknowledgement file cannot be mapped or a thread is interrupted
   */
  public static void main(String[] args) throws Exception {
    String uri = args[0];
    long seed = Long.parseLong(args[1]);
    MappedByteBuffer acks = map(Path.of(args[2]));
    try (Store s = GivenEngine.open(uri)) {
      Thread[] threads = new Thread[THREADS];
      for (int t = 0; t < THREADS; t++) {
        int thread = t;
        byte[][] keys = new byte[KEYS][];
        for (int k = 0; k < KEYS; k++) {
          keys[k] = key(thread, k);
        }
        byte[][] values = new byte[PERIOD][];
        for (int m = 0; m < PERIOD; m++) {
          values[m] = value(seed, thread, m);
        }
        threads[t] =
            new Thread(
                () -> {
                  for (long n = 0; ; n++) {
                    s.put(keys[(int) (n % KEYS)], values[(int) (n % PERIOD)]);
                    LONG.setRelease(acks, thread * SLOT, n);
                  }
                },
                "overwrite-" + t);
        threads[t].setUncaughtExceptionHandler(
            (th, e) -> {
              e.printStackTrace();
              Runtime.getRuntime().halt(1); // the parent reports the stack trace from stderr
            });
        threads[t].start();
      }
      // The threads run until the parent kills this JVM, within seconds; the limit only stops an
      // orphan whose parent died.
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
      for (Thread t : threads) {
        t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
      }
      System.err.println("overwrite worker: not killed within 10 minutes");
      Runtime.getRuntime().halt(3);
    }
  }

  /** Maps the acknowledgement file (created by the parent). */
  static MappedByteBuffer map(Path file) throws IOException {
    try (FileChannel ch =
        FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      return ch.map(FileChannel.MapMode.READ_WRITE, 0, (long) THREADS * SLOT);
    }
  }

  /** The last operation thread t acknowledged, as the parent reads it. */
  static long lastAck(MappedByteBuffer acks, int thread) {
    return (long) LONG.getAcquire(acks, thread * SLOT);
  }

  /** The operations every thread acknowledged, together: growing while the child progresses. */
  static long acknowledged(MappedByteBuffer acks) {
    long sum = 0;
    for (int t = 0; t < THREADS; t++) {
      sum += lastAck(acks, t) + 1;
    }
    return sum;
  }

  /** The fewest operations any thread has acknowledged, minus one. */
  static long slowest(MappedByteBuffer acks) {
    long min = Long.MAX_VALUE;
    for (int t = 0; t < THREADS; t++) {
      min = Math.min(min, lastAck(acks, t));
    }
    return min;
  }

  /** Sets every slot to "nothing acknowledged". */
  static void reset(MappedByteBuffer acks) {
    for (int t = 0; t < THREADS; t++) {
      LONG.setRelease(acks, t * SLOT, NONE);
    }
  }

  /** The key thread t's operation n writes. */
  static byte[] key(int thread, long n) {
    return ("o/" + thread + "/" + (n % KEYS)).getBytes(StandardCharsets.UTF_8);
  }

  /** The value thread t's operation n writes. */
  static byte[] value(long seed, int thread, long n) {
    byte[] v = new byte[VALUE_LENGTH];
    new SplittableRandom(seed * 31 + thread * 1_000_003L + n % PERIOD).nextBytes(v);
    return v;
  }

  /** The size of the acknowledgement file. */
  static int fileSize() {
    return THREADS * SLOT;
  }
}
