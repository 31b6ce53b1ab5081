package io.kv4j.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * What {@link AbstractStore} does once for every engine around keyspaces (names, handles, the
 * features a batch needs, close and drop), shown on the memory engine.
 */
class KeyspacesTest {
  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static Store memory() {
    return Stores.open(StoreConfig.builder("memory").build());
  }

  @Test
  void checkKeyspaceName_acceptsTheDocumentedAlphabetOnly() {
    assertThat(Store.checkKeyspaceName("a")).isEqualTo("a");
    assertThat(Store.checkKeyspaceName("Users_2-x")).isEqualTo("Users_2-x");
    assertThat(Store.checkKeyspaceName("z".repeat(64))).hasSize(64);
    for (String bad : List.of("", "-a", "a.b", "a/b", "a b", "é", "z".repeat(65), "a\u0000")) {
      assertThatThrownBy(() -> Store.checkKeyspaceName(bad))
          .as("name '%s'", bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("A-Z a-z 0-9 _ -");
    }
    assertThatThrownBy(() -> Store.checkKeyspaceName(null))
        .isInstanceOf(NullPointerException.class);
  }

  @Test
  void keyspace_handleInfo_isTheStoresWithoutNestingAndBackup() {
    try (Store s = memory()) {
      Store ks = s.keyspace("users");
      assertThat(ks.info().engine()).isEqualTo("memory");
      assertThat(ks.info().location()).isEqualTo("memory:#users");
      assertThat(ks.info().has(Feature.KEYSPACES)).isFalse();
      assertThat(ks.info().has(Feature.KEYSPACE_BATCH)).isTrue();
      assertThat(ks.info().has(Feature.CONDITIONAL_WRITE)).isTrue();
      assertThatThrownBy(() -> ks.keyspace("inner"))
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("KEYSPACES");
      assertThatThrownBy(() -> s.keyspace("default"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("the store's own keys");
    }
  }

  @Test
  void write_batchNamingOwnKeyspaceOnly_needsNoKeyspaceBatch() {
    try (Store s = memory()) {
      Store ks = s.keyspace("users");
      ks.write(new WriteBatch().put("users", b("k"), b("v")).put(b("j"), b("w")));
      assertThat(ks.get(b("k"))).isEqualTo(b("v"));
      assertThat(ks.get(b("j"))).isEqualTo(b("w"));
      assertThat(s.get(b("k"))).isNull();
    }
  }

  @Test
  void writeBatch_namedOperations_keepTheirKeyspaceAndOrder() {
    WriteBatch b = new WriteBatch().put(b("a"), b("1")).delete("x", b("b")).put("y", b("c"), b(""));
    assertThat(b.namesKeyspaces()).isTrue();
    assertThat(b.keyspace(0)).isNull();
    assertThat(b.keyspace(1)).isEqualTo("x");
    assertThat(b.isDelete(1)).isTrue();
    assertThat(b.keyspace(2)).isEqualTo("y");
    assertThat(b.byteSize()).isEqualTo(4); // a, 1, b, c and an empty value
    assertThatThrownBy(() -> b.put("bad name", b("k"), b("v")))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(b.size()).as("a refused operation is not added").isEqualTo(3);
    assertThatThrownBy(() -> b.keyspace(3)).isInstanceOf(IndexOutOfBoundsException.class);
    b.clear();
    assertThat(b.namesKeyspaces()).isFalse();
    assertThat(new WriteBatch().put(b("k"), b("v")).keyspace(0)).isNull();
  }

  @Test
  void close_ofTheStore_closesHandlesOpenedConcurrently() throws Exception {
    for (int round = 0; round < 200; round++) {
      Store s = memory();
      CountDownLatch go = new CountDownLatch(1);
      List<Store> opened = new ArrayList<>();
      AtomicReference<Throwable> error = new AtomicReference<>();
      Thread opener =
          new Thread(
              () -> {
                try {
                  go.await();
                  for (int i = 0; i < 50; i++) {
                    opened.add(s.keyspace("k" + i));
                  }
                } catch (StoreClosedException expected) {
                  // the store closed first: no handle may stay open
                } catch (Throwable t) {
                  error.set(t);
                }
              });
      opener.start();
      go.countDown();
      s.close();
      opener.join();
      assertThat(error.get()).as("round %d", round).isNull();
      for (Store h : opened) {
        assertThatThrownBy(() -> h.get(b("k")))
            .as("round %d: a handle opened while the store closed is closed", round)
            .isInstanceOf(StoreClosedException.class);
      }
    }
  }

  @Test
  void failedState_isSharedByTheStoreAndItsKeyspaces() {
    try (Store s = memory()) {
      AbstractStore ks = (AbstractStore) s.keyspace("users");
      ks.failWrites("append to test", new java.io.IOException("disk full"));
      assertThatThrownBy(() -> s.put(b("k"), b("v")))
          .isInstanceOf(io.kv4j.StoreIOException.class)
          .hasMessageContaining("failed until reopened");
      assertThatThrownBy(() -> s.keyspace("other").put(b("k"), b("v")))
          .isInstanceOf(io.kv4j.StoreIOException.class);
      assertThat(s.get(b("k"))).as("reads go on").isNull();
    }
  }
}
