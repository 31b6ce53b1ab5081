package io.kv4j.rocksdb;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.RocksDB;

/** Proves the native library in the rocksdbjni jar from Maven Central loads and works here. */
class NativeLibrarySmokeTest {
  @TempDir Path dir;

  @Test
  void loadLibrary_nativeVersionMatchesPinnedJar() {
    RocksDB.loadLibrary();
    RocksDB.Version v = RocksDB.rocksdbVersion();
    assertThat(v.toString())
        .as("native RocksDB version from the bundled library")
        .isEqualTo("11.8.1");
  }

  @Test
  void open_byIdAndAlias_roundTripsThroughNativeCode() {
    assertThat(Stores.provider("lsm")).isInstanceOf(RocksDbProvider.class);
    assertThat(Stores.provider("rocksdb")).isInstanceOf(RocksDbProvider.class);
    try (Store s = Stores.open(StoreConfig.builder("lsm").path(dir.resolve("db")).build())) {
      s.put("k".getBytes(StandardCharsets.UTF_8), "v".getBytes(StandardCharsets.UTF_8));
      assertThat(s.get("k".getBytes(StandardCharsets.UTF_8)))
          .isEqualTo("v".getBytes(StandardCharsets.UTF_8));
      assertThat(s.info().engine()).isEqualTo("rocksdb");
    }
  }
}
