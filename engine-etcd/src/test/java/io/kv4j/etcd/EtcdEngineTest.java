package io.kv4j.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreIOException;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Options, the etcd request limits and batch collapsing, on the cluster of .ci/etcd.sh. */
class EtcdEngineTest {
  @TempDir Path dir;

  private final List<String> prefixes = new ArrayList<>();

  @BeforeAll
  static void cluster() {
    TestEtcd.require();
  }

  @AfterEach
  void drop() {
    for (String p : prefixes) {
      TestEtcd.drop(p);
    }
  }

  private Store open(StoreConfig.Builder b, Path path) {
    prefixes.add(TestEtcd.prefixFor(path));
    return Stores.open(b.path(path).build());
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void unknownOption_isRefusedListingTheValidOnes() {
    assertThatThrownBy(() -> TestEtcd.builder().path(dir).option("endpoint", "x").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("endpoint")
        .hasMessageContaining("endpoints")
        .hasMessageContaining("max-txn-ops");
  }

  @Test
  void badEndpoint_isRefusedNamingTheOption() {
    assertThatThrownBy(
            () ->
                Stores.open(
                    StoreConfig.builder("etcd")
                        .path(dir)
                        .option("endpoints", "127.0.0.1:2379")
                        .build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("endpoints");
  }

  @Test
  void unreachableCluster_failsWithStoreIOExceptionNamingIt() {
    assertThatThrownBy(
            () ->
                Stores.open(
                    StoreConfig.builder("etcd")
                        .path(dir)
                        .option("endpoints", "http://127.0.0.1:9")
                        .option("retry-timeout", "300")
                        .build()))
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining("http://127.0.0.1:9")
        .hasMessageContaining("etcd");
  }

  @Test
  void batchOverMaxTxnOps_isRefusedNamingTheLimit_andWritesNothing() {
    StoreConfig.Builder limits =
        TestEtcd.builder().option("max-txn-ops", "128").option("max-request-bytes", "1048576");
    try (Store s = open(limits, dir.resolve("ops"))) {
      assertThatThrownBy(() -> s.write(batch(129, "k")))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("max-txn-ops=128");
      assertThat(s.get(b("k0"))).isNull();
      s.write(batch(128, "k")); // one operation per key while the store never held a chunk
      assertThat(s.stats().keyCount()).isEqualTo(128);
      // Once it has held a chunked value, each key also deletes its old chunks: two operations.
      s.put(b("big"), new byte[2 << 20]);
      assertThatThrownBy(() -> s.write(batch(65, "j")))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("max-txn-ops=128");
      s.write(batch(64, "j"));
      assertThat(s.stats().keyCount()).isEqualTo(128 + 1 + 64);
    }
  }

  private static WriteBatch batch(int n, String prefix) {
    WriteBatch w = new WriteBatch();
    for (int i = 0; i < n; i++) {
      w.put(b(prefix + i), b("v"));
    }
    return w;
  }

  @Test
  void batchWhoseKeysAloneOverflowMaxRequestBytes_isRefusedNamingTheLimit_andWritesNothing() {
    try (Store s = open(TestEtcd.builder().option("max-request-bytes", "262144"), dir)) {
      WriteBatch keys = new WriteBatch();
      for (int i = 0; i < 100; i++) { // 100 keys of 4 KiB: no chunking makes their txn smaller
        byte[] k = new byte[4096];
        k[0] = (byte) i;
        keys.put(k, b("v"));
      }
      assertThatThrownBy(() -> s.write(keys))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("max-request-bytes=262144");
      assertThat(s.stats().keyCount()).isZero();
      assertThat(TestEtcd.count(TestEtcd.prefixFor(dir) + "c/")).as("chunk keys").isZero();
    }
  }

  @Test
  void valueOverMaxRequestBytes_isStoredInChunks() {
    try (Store s = open(TestEtcd.builder().option("max-request-bytes", "1572864"), dir)) {
      byte[] two = new byte[2 << 20];
      new java.util.SplittableRandom(7).nextBytes(two);
      s.put(b("big"), two);
      s.put(b("fits"), new byte[1 << 20]);
      assertThat(s.get(b("big"))).isEqualTo(two);
      assertThat(s.get(b("fits"))).hasSize(1 << 20);
    }
  }

  @Test
  void batchNamingAKeyTwice_leavesEachKeysLastOperation() {
    try (Store s = open(TestEtcd.builder(), dir)) {
      s.put(b("c"), b("old"));
      WriteBatch w =
          new WriteBatch()
              .put(b("a"), b("1"))
              .put(b("a"), b("2"))
              .put(b("b"), b("x"))
              .delete(b("b"))
              .delete(b("c"))
              .put(b("c"), b("new"));
      s.write(w);
      List<String> seen = new ArrayList<>();
      try (var c = s.scan(KeyRange.all())) {
        c.forEachRemaining(
            e ->
                seen.add(
                    new String(e.key(), StandardCharsets.UTF_8)
                        + "="
                        + new String(e.value(), StandardCharsets.UTF_8)));
      }
      assertThat(seen).containsExactly("a=2", "c=new");
    }
  }
}
