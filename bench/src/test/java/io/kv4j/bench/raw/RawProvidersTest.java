package io.kv4j.bench.raw;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import io.kv4j.bench.Instruments;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The raw baselines load their native library and are correct for what the runner does. */
class RawProvidersTest {
  @TempDir Path dir;

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.ISO_8859_1);
  }

  private static List<String> keys(Cursor c) {
    List<String> out = new ArrayList<>();
    try (c) {
      while (c.hasNext()) {
        Entry e = c.next();
        out.add(new String(e.key(), StandardCharsets.ISO_8859_1));
      }
    }
    return out;
  }

  private StoreConfig config(String id, Durability d) {
    return StoreConfig.builderFor(Instruments.provider(id))
        .path(dir.resolve(id))
        .durability(d)
        .build();
  }

  @ParameterizedTest
  @ValueSource(strings = {"rocksdb-raw", "lmdb-raw", "sqlite-raw"})
  void raw_putGetDeleteScanReopen_behaveLikeAStore(String id) {
    try (Store s = Stores.open(config(id, Durability.SYNC))) {
      s.put(b("b"), b("2"));
      s.put(b("a"), b("1"));
      s.put(b("\u00ff"), b("high")); // unsigned order: after 'c'
      s.put(b("c"), new byte[0]);
      s.put(b("a"), b("1bis"));
      s.delete(b("b"));
      assertThat(s.get(b("a"))).isEqualTo(b("1bis"));
      assertThat(s.get(b("b"))).isNull();
      assertThat(s.get(b("c"))).isEmpty();
      s.write(new WriteBatch().put(b("d"), b("4")).delete(b("c")));
      assertThat(keys(s.scan(KeyRange.all()))).containsExactly("a", "d", "\u00ff");
      assertThat(keys(s.scan(KeyRange.all().gte(b("b")).limit(1)))).containsExactly("d");
      assertThat(keys(s.scan(KeyRange.all().gt(b("a")).lt(b("\u00ff"))))).containsExactly("d");
      assertThat(s.info().durability()).isEqualTo(Durability.SYNC);
      s.sync();
    }
    try (Store s = Stores.open(config(id, Durability.BUFFERED))) {
      assertThat(s.get(b("d"))).isEqualTo(b("4"));
      assertThat(s.get(b("\u00ff"))).isEqualTo(b("high"));
      assertThat(s.stats().diskBytes()).isPositive();
    }
  }
}
