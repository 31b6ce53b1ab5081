package io.kv4j.lmdb;

import static io.kv4j.lmdb.Lmdb.b;
import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.Stores;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LmdbSmokeTest {
  @TempDir Path dir;

  @Test
  void nativeLibrary_loadsFromTheBundledJar() {
    try (Store s = Lmdb.open(dir)) {
      s.put(b("k"), b("v"));
      assertThat(s.get(b("k"))).isEqualTo(b("v"));
      assertThat(s.stats().keyCount()).isEqualTo(1);
    }
    assertThat(dir.resolve("data.mdb")).isRegularFile();
  }

  @Test
  void provider_isRegisteredUnderIdAndAlias() {
    assertThat(Stores.provider("lmdb")).isInstanceOf(LmdbProvider.class);
    assertThat(Stores.provider("btree")).isInstanceOf(LmdbProvider.class);
    assertThat(Stores.provider("lmdb").features())
        .containsExactlyInAnyOrder(
            Feature.ORDERED_SCAN,
            Feature.REVERSE_SCAN,
            Feature.SNAPSHOT_SCAN,
            Feature.ATOMIC_BATCH,
            Feature.PERSISTENT,
            Feature.CHECKSUMS,
            Feature.CONDITIONAL_WRITE,
            Feature.SNAPSHOT_READ,
            Feature.BACKUP,
            Feature.KEYSPACES,
            Feature.KEYSPACE_BATCH,
            Feature.CONDITIONAL_BATCH);
    assertThat(Stores.provider("lmdb").limits().maxKeySize()).isEqualTo(511);
  }
}
