package io.kv4j.hashlog;

import io.kv4j.Durability;
import io.kv4j.Store;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Child JVM for {@link KeyspaceTest}. Mode {@code write}: round i puts key i into keyspaces {@code
 * a} and {@code b} and the store's own keys, creates keyspace {@code t<i>}, puts one key into it
 * and drops it, printing {@code ack i} once all of that returned; forever, until killed. Mode
 * {@code drop}: keyspace {@code gone} gets 100 keys, {@code kept} 100 keys, then {@code gone} is
 * dropped and the child parks right after the drop's rename (test hook), printing {@code renamed},
 * until killed. Mode {@code rotate} ({@link KeyspaceFilesTest}): with {@code max-open-files=2},
 * round i puts key i into keyspaces {@code r0} to {@code r5} in turn, so that nearly every write
 * goes to a keyspace whose active segment's file was closed, printing {@code ack i}, and after
 * round 20 {@code closes <n>}, the files closed so far; forever, until killed.
 */
final class KeyspaceCrashChild {
  private KeyspaceCrashChild() {}

  static byte[] key(int i) {
    return String.format("key-%08d", i).getBytes(StandardCharsets.US_ASCII);
  }

  static byte[] value(String keyspace, int i) {
    return (keyspace + "-" + i + "-" + "x".repeat(i % 300)).getBytes(StandardCharsets.US_ASCII);
  }

  public static void main(String[] args) {
    Path dir = Path.of(args[0]);
    Durability d = Durability.valueOf(args[1]);
    PrintStream out =
        new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true);
    FaultyStorage storage = new FaultyStorage();
    if (args[2].equals("rotate")) {
      rotate(dir, d, out);
      return;
    }
    try (Store s = TestStores.open(dir, d, storage, "segment-size", "64KiB")) {
      if (args[2].equals("drop")) {
        Store gone = s.keyspace("gone");
        Store kept = s.keyspace("kept");
        for (int i = 0; i < 100; i++) {
          gone.put(key(i), value("gone", i));
          kept.put(key(i), value("kept", i));
        }
        // After the drop's rename (and the directory's force), before its first deletion.
        storage.beforeDeleting(
            Keyspaces.DROPPING + "gone",
            () -> {
              out.println("renamed");
              while (true) {
                java.util.concurrent.locks.LockSupport.park(); // until SIGKILL
              }
            });
        s.dropKeyspace("gone");
        return;
      }
      Store a = s.keyspace("a");
      Store b = s.keyspace("b");
      for (int i = 0; ; i++) {
        a.put(key(i), value("a", i));
        b.put(key(i), value("b", i));
        s.put(key(i), value("default", i));
        Store t = s.keyspace("t" + i);
        t.put(key(i), value("t", i));
        s.dropKeyspace("t" + i);
        out.println("ack " + i);
      }
    }
  }

  /** Keyspaces of mode {@code rotate}. */
  static final int ROTATED = 6;

  private static void rotate(Path dir, Durability d, PrintStream out) {
    try (HashLogStore s = TestStores.open(dir, d, "segment-size", "32KiB", "max-open-files", "2")) {
      Store[] ks = new Store[ROTATED];
      for (int k = 0; k < ROTATED; k++) {
        ks[k] = s.keyspace("r" + k);
      }
      for (int i = 0; ; i++) {
        for (int k = 0; k < ROTATED; k++) {
          ks[k].put(key(i), value("r" + k, i));
        }
        out.println("ack " + i);
        if (i == 20) {
          out.println("closes " + s.openFiles().closes());
        }
      }
    }
  }
}
