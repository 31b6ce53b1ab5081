package io.kv4j.hashlog;

import io.kv4j.Durability;
import java.io.FileInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Child process of {@link DescriptorExhaustionTest}: overwrites {@link #KEYS} keys in a store of 64
 * KiB segments (so segments roll, seal and are compacted all the time), takes every file descriptor
 * the process may still open once {@link #HOG_AT} writes are acknowledged, and writes on until the
 * store fails. Prints {@code acked N} (writes acknowledged) and {@code failure <message>}, then
 * gives the descriptors back and closes the store. A process of its own, since it starves
 * everything in it of descriptors.
 */
final class DescriptorExhaustionChild {
  static final int KEYS = 2_000;
  static final int HOG_AT = 5_000;
  static final int MAX_WRITES = 400_000;

  private DescriptorExhaustionChild() {}

  /** {@code <dir> <durability>}. */
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    Durability d = Durability.valueOf(args[1]);
    int acked = 0;
    List<FileInputStream> hogs = new ArrayList<>();
    String failure = null;
    HashLogStore s = TestStores.open(dir, d, "segment-size", "65536");
    try {
      for (int i = 0; i < MAX_WRITES; i++) {
        if (i == HOG_AT) {
          try {
            while (true) {
              hogs.add(new FileInputStream("/dev/null"));
            }
          } catch (IOException e) {
            System.out.println("hogged " + hogs.size());
          }
        }
        s.put(key(i % KEYS), value(i));
        acked = i + 1;
      }
    } catch (RuntimeException e) {
      failure = e.getClass().getName() + ": " + e.getMessage();
    }
    for (FileInputStream f : hogs) {
      f.close();
    }
    System.out.println("acked " + acked);
    System.out.println("failure " + failure);
    try {
      s.close();
    } catch (RuntimeException e) {
      System.out.println("close " + e);
    }
    System.out.flush();
  }

  static byte[] key(int k) {
    return ByteBuffer.allocate(16).putLong(k).array();
  }

  /** The value of write {@code i}: its number, then filler. */
  static byte[] value(int i) {
    byte[] v = new byte[200];
    Arrays.fill(v, (byte) i);
    ByteBuffer.wrap(v).putInt(i);
    return v;
  }
}
