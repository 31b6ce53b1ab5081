package io.kv4j.hashlog;

import io.kv4j.Durability;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Child JVM for {@link KillNineTest}: writes key i with {@link #value(int, int)} forever, printing
 * {@code ack i} after each write returns, until it is killed.
 */
final class CrashChild {
  private CrashChild() {}

  static byte[] key(int i) {
    return String.format("key-%08d", i).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
  }

  /**
   * Small values below key {@code big}, 64 MiB values from it on. Without {@code tear} the parent
   * kills the child once the first big write is acknowledged, so the kill often lands inside a
   * later big write; with it, the child stops half-way through writing the first big value (test
   * point of the store) and the parent kills it there, leaving a torn record of known size.
   */
  static byte[] value(int i, int big) {
    int len = i >= big ? 64 << 20 : (i * 37) % 700;
    byte[] v = new byte[len];
    Arrays.fill(v, (byte) i);
    return v;
  }

  public static void main(String[] args) {
    Path dir = Path.of(args[0]);
    Durability d = Durability.valueOf(args[1]);
    int big = Integer.parseInt(args[2]);
    boolean tear = Boolean.parseBoolean(args[3]);
    PrintStream out =
        new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true);
    try (HashLogStore s = TestStores.open(dir, d, "segment-size", "1MiB")) {
      if (tear) {
        s.log.midWrite =
            () -> {
              out.println("torn");
              while (true) {
                java.util.concurrent.locks.LockSupport.park(); // until SIGKILL
              }
            };
      }
      for (int i = 0; ; i++) {
        s.put(key(i), value(i, big));
        out.println("ack " + i);
      }
    }
  }
}
