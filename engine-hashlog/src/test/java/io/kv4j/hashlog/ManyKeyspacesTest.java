package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import io.kv4j.Store;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A store's keyspaces share its background threads: one sealer and one compactor pool serve the
 * store and every keyspace, so the engine's threads do not grow with the number of keyspaces, and
 * closing the store ends them all.
 */
final class ManyKeyspacesTest {
  private static final int KEYSPACES = 500;

  @TempDir Path tmp;

  private static long engineThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.isAlive() && t.getName().startsWith("kv4j-hashlog"))
        .count();
  }

  private HashLogStore open(Path dir) {
    return TestStores.open(
        dir, Durability.BUFFERED, "segment-size", "65536", "compaction-threads", "2");
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
