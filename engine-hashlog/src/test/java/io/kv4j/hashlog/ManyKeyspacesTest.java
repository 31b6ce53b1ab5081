package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.spi.DirectoryLock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A store's keyspaces share its background threads: one sealer and one compactor pool serve the
 * store and every keyspace, so the engine's threads do not grow with the number of keyspaces, and
 * closing the store ends them all. They share its directory lock too (an open keyspace holds no
 * lock descriptor of its own), and its bound on open files: only the {@code max-open-files} most
 * recently written keyspaces keep their active segment's file open.
 */
final class ManyKeyspacesTest {
  private static final int KEYSPACES = 500;

  /** Descriptors a store may hold for a moment besides its segments (a hint or manifest write). */
  private static final int SLACK = 8;

  /** The bound on the keyspaces' open active segments in the descriptor test. */
  private static final int MAX_OPEN = 50;

  @TempDir Path tmp;

  private static long engineThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.isAlive() && t.getName().startsWith("kv4j-hashlog"))
        .count();
  }

  /**
   * What the open descriptors of this process under {@code dir} point to (from /proc/self/fd; the
   * JVM's own and those of other tests are elsewhere).
   */
  private static List<String> descriptorsUnder(Path dir) throws IOException {
    String d = dir.toRealPath().toString();
    List<String> out = new ArrayList<>();
    try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
      for (Path fd : (Iterable<Path>) s::iterator) {
        try {
          String target = Files.readSymbolicLink(fd).toString();
          if (target.startsWith(d)) {
            out.add(target);
          }
        } catch (IOException gone) {
          // closed between the listing and the read (the listing's own descriptor, for one)
        }
      }
    }
    return out;
  }

  private HashLogStore open(Path dir) {
    return TestStores.open(
        dir, Durability.BUFFERED, "segment-size", "65536", "compaction-threads", "2");
  }

  @ParameterizedTest
  @EnumSource(Durability.class)
  void fiveHundredKeyspaces_holdAtMostMaxOpenFiles_noLockOfTheirOwn(Durability d)
      throws IOException {
    Path dir = tmp.resolve("store");
    String[] options = {"segment-size", "65536", "max-open-files", String.valueOf(MAX_OPEN)};
    try (HashLogStore s = TestStores.open(dir, d, options)) {
      int root = descriptorsUnder(dir).size();
      for (int i = 0; i < KEYSPACES; i++) {
        try (Store k = s.keyspace("k" + i)) {
          k.put(TestStores.bytes("key"), TestStores.bytes("value " + i));
        }
      }
      List<String> with = descriptorsUnder(dir);
      // Before keyspaces shared the store's lock and its bound, each held two: +1,000 here.
      assertThat(with.size() - root)
          .as(
              "descriptors under the store with %d keyspaces (the store alone: %d, %s)",
              KEYSPACES, root, d)
          .isLessThanOrEqualTo(MAX_OPEN + SLACK);
      assertThat(with)
          .as("lock files held open inside keyspaces/")
          .noneMatch(
              t ->
                  t.contains("/" + Keyspaces.DIR_NAME + "/")
                      && t.endsWith(DirectoryLock.FILE_NAME));
      assertThat(s.openFiles().closes())
          .as("active segments' files closed to keep the bound")
          .isGreaterThanOrEqualTo(KEYSPACES - MAX_OPEN);
      // A second write to every keyspace opens each file again (most were closed), and closes it.
      for (int i = 0; i < KEYSPACES; i++) {
        try (Store k = s.keyspace("k" + i)) {
          k.put(TestStores.bytes("key2"), TestStores.bytes("second " + i));
        }
      }
      assertThat(descriptorsUnder(dir).size() - root)
          .as("descriptors after a second write to each keyspace (%s)", d)
          .isLessThanOrEqualTo(MAX_OPEN + SLACK);
      assertThat(s.openFiles().open()).isLessThanOrEqualTo(MAX_OPEN);
    }
    assertThat(descriptorsUnder(dir)).as("descriptors left after close").isEmpty();
    try (HashLogStore s = TestStores.open(dir, d, options)) {
      int root = descriptorsUnder(dir).size();
      for (int i = 0; i < KEYSPACES; i++) {
        try (Store k = s.keyspace("k" + i)) {
          assertThat(k.get(TestStores.bytes("key")))
              .as("keyspace k%d after reopen (%s)", i, d)
              .isEqualTo(TestStores.bytes("value " + i));
          assertThat(k.get(TestStores.bytes("key2")))
              .as("keyspace k%d's second write after reopen (%s)", i, d)
              .isEqualTo(TestStores.bytes("second " + i));
        }
      }
      assertThat(descriptorsUnder(dir).size() - root)
          .as("descriptors under the reopened store with %d keyspaces opened (%s)", KEYSPACES, d)
          .isLessThanOrEqualTo(MAX_OPEN + SLACK);
      s.verify();
    }
  }

  @Test
  void fiveHundredKeyspaces_shareTheStoresThreads_andReadBackAfterReopen() {
    Path dir = tmp.resolve("store");
    long before = engineThreads();
    try (HashLogStore s = open(dir)) {
      long root = engineThreads() - before;
      for (int i = 0; i < KEYSPACES; i++) {
        try (Store k = s.keyspace("k" + i)) {
          k.put(TestStores.bytes("key"), TestStores.bytes("value " + i));
        }
      }
      long with = engineThreads() - before;
      // Sealer + 2 compactors for the store; a thread per keyspace would add thousands.
      assertThat(with)
          .as("engine threads with %d keyspaces (the store alone: %d)", KEYSPACES, root)
          .isLessThanOrEqualTo(root)
          .isLessThanOrEqualTo(3);
      s.sync();
    }
    assertThat(engineThreads() - before)
        .as("engine threads left after close")
        .isLessThanOrEqualTo(0);
    try (HashLogStore s = open(dir)) {
      assertThat(s.keyspaces()).hasSize(KEYSPACES);
      for (int i = 0; i < KEYSPACES; i++) {
        try (Store k = s.keyspace("k" + i)) {
          assertThat(k.get(TestStores.bytes("key")))
              .as("keyspace k%d after reopen", i)
              .isEqualTo(TestStores.bytes("value " + i));
        }
      }
    }
    assertThat(engineThreads() - before)
        .as("engine threads left after close")
        .isLessThanOrEqualTo(0);
  }
}
