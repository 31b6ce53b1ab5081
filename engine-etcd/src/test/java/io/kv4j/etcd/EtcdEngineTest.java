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
    try (Store s = open(TestEtcd.builder().option("max-txn-ops", "128"), dir.resolve("ops"))) {
      WriteBatch big = new WriteBatch();
      for (int i = 0; i < 129; i++) {
        big.put(b("k" + i), b("v"));
      }
      assertThatThrownBy(() -> s.write(big))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("max-txn-ops=128");
      assertThat(s.get(b("k0"))).isNull();
      WriteBatch fits = new WriteBatch();
      for (int i = 0; i < 127; i++) { // the lock fence is the 128th comparison, not an operation
        fits.put(b("k" + i), b("v"));
      }
      s.write(fits);
      assertThat(s.stats().keyCount()).isEqualTo(127);
    }
  }

  @Test
  void valueOverMaxRequestBytes_isRefusedNamingTheLimit() {
    try (Store s = open(TestEtcd.builder().option("max-request-bytes", "1572864"), dir)) {
      byte[] two = new byte[2 << 20];
      assertThatThrownBy(() -> s.put(b("big"), two))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("max-request-bytes=1572864");
      s.put(b("fits"), new byte[1 << 20]);
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
