package io.kv4j.hashlog;

import static io.kv4j.hashlog.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.WriteBatch;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CollisionTest {
  @TempDir Path dir;

  private static final KeyDir.Hasher SAME = key -> 12345L;

  @Test
  void everyKeyWithTheSameHash_getPutDeleteScan_loseNothing() {
    int n = 300;
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, SAME, "segment-size", "8KiB")) {
      for (int i = 0; i < n; i++) {
        s.put(bytes("k" + i), bytes("v" + i));
      }
      for (int i = 0; i < n; i += 3) {
        s.delete(bytes("k" + i));
      }
      s.write(new WriteBatch().put(bytes("k1"), bytes("new")).delete(bytes("k2")));
      check(s, n);
    }
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, SAME, "segment-size", "8KiB")) {
      check(s, n);
    }
  }

  private static void check(HashLogStore s, int n) {
    int live = 0;
    for (int i = 0; i < n; i++) {
      byte[] v = s.get(bytes("k" + i));
      if (i % 3 == 0 || i == 2) {
        assertThat(v).as("k" + i).isNull();
      } else {
        live++;
        assertThat(v).as("k" + i).isEqualTo(i == 1 ? bytes("new") : bytes("v" + i));
      }
    }
    assertThat(s.stats().keyCount()).isEqualTo(live);
    List<Entry> scanned = TestStores.scan(s, KeyRange.prefix(bytes("k1")));
    assertThat(scanned).extracting(e -> new String(e.key())).startsWith("k1", "k10", "k100");
    assertThat(TestStores.scan(s, KeyRange.all())).hasSize(live);
  }
}
