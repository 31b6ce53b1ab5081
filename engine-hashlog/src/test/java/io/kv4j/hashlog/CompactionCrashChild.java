package io.kv4j.hashlog;

import io.kv4j.Durability;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Child JVM for {@link CompactionKillTest}: churns 200 keys (puts and deletes) with background
 * compaction, printing {@code ack i} after operation i returns. When a compaction run reaches the
 * step named on the command line it prints {@code step} and stops there until the parent kills the
 * process with SIGKILL; the writer keeps writing meanwhile.
 */
final class CompactionCrashChild {
  private CompactionCrashChild() {}

  static final int KEYS = 200;

  static byte[] key(int k) {
    return String.format("key-%04d", k).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
  }

  /** Operation i: a delete of its key every third operation, else a put of {@link #value}. */
  static boolean isDelete(int i) {
    return i % 3 == 2;
  }

  static int keyOf(int i) {
    return (int) ((i * 2654435761L) % KEYS);
  }

  static byte[] value(int i) {
    byte[] v = new byte[100 + (i * 13) % 300];
    Arrays.fill(v, (byte) i);
    v[0] = (byte) (i >>> 24);
    v[1] = (byte) (i >>> 16);
    v[2] = (byte) (i >>> 8);
    return v;
  }

  public static void main(String[] args) {
    Path dir = Path.of(args[0]);
    Compactor.Step stop = Compactor.Step.valueOf(args[1]);
    PrintStream out =
        new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true);
    try (HashLogStore s =
        TestStores.open(
            dir,
            Durability.BUFFERED,
            "segment-size",
            "16KiB",
            "compaction-garbage-threshold",
            "0.2")) {
      s.compactor.hook =
          at -> {
            if (at == stop) {
              out.println("step");
              while (true) {
                java.util.concurrent.locks.LockSupport.park(); // until SIGKILL
              }
            }
          };
      for (int i = 0; ; i++) {
        int k = keyOf(i);
        if (isDelete(i)) {
          s.delete(key(k));
        } else {
          s.put(key(k), value(i));
        }
        out.println("ack " + i);
      }
    }
  }
}
