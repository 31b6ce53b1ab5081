package io.kv4j.hashlog;

import io.kv4j.Durability;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

/**
 * Child process of {@link DescriptorExhaustionTest}: overwrites {@link #KEYS} keys in a store of 64
 * KiB segments (so segments roll, seal and are compacted all the time), takes every file descriptor
 * the process may still open once {@link #HOG_AT} writes are acknowledged, and writes on until the
 * store fails. Prints {@code acked N} (writes acknowledged) and {@code failure <message>}, then
 * gives the descriptors back and closes the store. A process of its own, since it starves
 * everything in it of descriptors.
 *
 * <p>It tests the store and nothing else: before it takes the descriptors, it loads every kv4j
 * class from the class path's directories (under Maven the engine's own classes are files in {@code
 * target/classes}, each needing a descriptor to load; from a jar, as in production, they need
 * none), and whatever the write loop throws, {@code Error}s included, is reported only after the
 * descriptors are given back.
 */
final class DescriptorExhaustionChild {
  static final int KEYS = 2_000;
  static final int HOG_AT = 5_000;
  static final int MAX_WRITES = 400_000;
  static final String EARLY_EXIT_MESSAGE = "exit-early: failing on purpose before any write";

  private DescriptorExhaustionChild() {}

  /** {@code <dir> <durability> <hog|exit-early>}. */
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    Durability d = Durability.valueOf(args[1]);
    if (args[2].equals("exit-early")) {
      System.err.println(EARLY_EXIT_MESSAGE);
      System.exit(1);
    }
    System.out.println("loaded " + loadKv4jClasses());
    int acked = 0;
    List<FileInputStream> hogs = new ArrayList<>();
    Throwable failure = null;
    HashLogStore s = TestStores.open(dir, d, "segment-size", "65536");
    try {
      for (int i = 0; i < MAX_WRITES; i++) {
        if (i == HOG_AT) {
          try {
            while (true) {
              hogs.add(new FileInputStream("/dev/null"));
            }
          } catch (IOException e) {
            // every descriptor the process may open is taken
          }
        }
        s.put(key(i % KEYS), value(i));
        acked = i + 1;
      }
    } catch (Throwable t) {
      failure = t;
    }
    for (FileInputStream f : hogs) {
      f.close();
    }
    System.out.println("hogged " + hogs.size());
    System.out.println("acked " + acked);
    System.out.println(
        "failure "
            + (failure == null
                ? null
                : failure.getClass().getName() + ": " + failure.getMessage()));
    if (failure != null && !(failure instanceof RuntimeException)) {
      failure.printStackTrace();
    }
    try {
      s.close();
    } catch (RuntimeException e) {
      System.out.println("close " + e);
    }
    System.out.flush();
  }

  /** Loads (without initializing) every class under {@code io/kv4j} in the class path's folders. */
  private static int loadKv4jClasses() throws IOException {
    int n = 0;
    for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
      Path root = Path.of(entry);
      if (!Files.isDirectory(root.resolve("io/kv4j"))) {
        continue;
      }
      List<String> names;
      try (Stream<Path> files = Files.walk(root.resolve("io/kv4j"))) {
        names =
            files
                .map(p -> root.relativize(p).toString())
                .filter(p -> p.endsWith(".class") && !p.endsWith("module-info.class"))
                .map(p -> p.substring(0, p.length() - 6).replace('/', '.'))
                .toList();
      } catch (UncheckedIOException e) {
        throw e.getCause();
      }
      for (String name : names) {
        try {
          Class.forName(name, false, DescriptorExhaustionChild.class.getClassLoader());
          n++;
        } catch (ClassNotFoundException | LinkageError e) {
          // a test class whose dependencies are not needed here
        }
      }
    }
    return n;
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
