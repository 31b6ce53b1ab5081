package io.kv4j.hashlog;

import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.tck.ChildProcess;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Helpers shared by the engine tests. */
final class TestStores {
  private TestStores() {}

  /**
   * Starts {@code main} in a child JVM of this one's Java and class path, with a heap of {@code
   * heapMegabytes}: for tests whose child is killed, or starves itself. Its {@link
   * ChildProcess#describe()} says how it ended, with its output, for assertion messages.
   */
  static ChildProcess child(int heapMegabytes, Class<?> main, String... args)
      throws java.io.IOException {
    return ChildProcess.java(main, args).jvmOptions("-Xmx" + heapMegabytes + "m").start();
  }

  static StoreConfig.Builder config(Path dir, Durability d) {
    return StoreConfig.builder("hashlog").path(dir).durability(d);
  }

  static HashLogStore open(Path dir, Durability d, String... options) {
    return open(dir, d, HashLogProvider.seededHasher(42), options);
  }

  static HashLogStore open(Path dir, Durability d, KeyDir.Hasher hasher, String... options) {
    StoreConfig.Builder b = config(dir, d);
    for (int i = 0; i < options.length; i += 2) {
      b.option(options[i], options[i + 1]);
    }
    return HashLogProvider.open(b.build(), hasher);
  }

  /** Opens with every file operation going to {@code storage}. */
  static HashLogStore open(Path dir, Durability d, Storage storage, String... options) {
    StoreConfig.Builder b = config(dir, d);
    for (int i = 0; i < options.length; i += 2) {
      b.option(options[i], options[i + 1]);
    }
    return HashLogProvider.open(b.build(), HashLogProvider.seededHasher(42), storage);
  }

  static List<Entry> scan(Store s, KeyRange r) {
    List<Entry> out = new ArrayList<>();
    s.forEach(r, out::add);
    return out;
  }

  static byte[] bytes(String s) {
    return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }

  /**
   * The id of the {@code n}-th segment (from 1) a new store writes, with no compaction run between
   * (active segments take ids {@link SegmentLog#ID_STRIDE} apart).
   */
  static int writeSegment(int n) {
    int id = 1;
    for (int i = 1; i < n; i++) {
      id = SegmentLog.nextWriteId(id);
    }
    return id;
  }

  /** The highest id below the active segment's: the newest sealed segment. */
  static int newestSealed(HashLogStore s) {
    int newest = -1;
    for (Segment g : s.segments()) {
      if (g != s.activeSegment()) {
        newest = Math.max(newest, g.id);
      }
    }
    return newest;
  }

  /**
   * Makes a cleanly closed store look as if its last session had crashed (the manifest no longer
   * says "clean"), for tests that then tear the newest segment the way a crash would.
   */
  static void markCrashed(Path dir) {
    try {
      Manifest m = Manifest.read(dir);
      new Manifest(false, m.generation + 1, m.active, 0, m.liveIds, m.liveLengths, m.retired)
          .write(dir);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  static long figure(Store s, String name) {
    return s.stats().figures().get(name).longValue();
  }
}
