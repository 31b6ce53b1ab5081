package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.spi.StoreProvider;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bench's instruments are the bench's: in no engine registry an application sees, yet opened by
 * their ids by the runner.
 */
class InstrumentsTest {
  private static final List<String> IDS =
      List.of(
          "mapdb",
          "mvstore",
          "chronicle-map",
          "rocksdb-raw",
          "lmdb-raw",
          "sqlite-raw",
          "floor",
          "floor-crc");

  @TempDir Path dir;

  @Test
  void registry_onTheBenchClassPath_holdsNoInstrument() {
    assertThat(Stores.providers())
        .as("the engine registry with the bench jar on the class path")
        .extracting(StoreProvider::id)
        .contains("hashlog", "lmdb")
        .doesNotContainAnyElementsOf(IDS);
    assertThat(Stores.providers())
        .noneMatch(p -> p.getClass().getPackageName().startsWith("io.kv4j.bench."));
    for (String id : IDS) {
      assertThatThrownBy(() -> Stores.open(id + ":" + dir.resolve(id)))
          .as(id + " by URI, as any application would")
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("unknown engine '" + id + "'");
    }
  }

  @Test
  void runner_opensEachInstrumentByItsId() {
    List<StoreProvider> selected =
        Engines.select(Options.parse("--engines", String.join(",", IDS)));
    assertThat(selected).extracting(StoreProvider::id).containsExactlyElementsOf(IDS);
    byte[] k = "k".getBytes(StandardCharsets.UTF_8);
    for (StoreProvider p : selected) {
      assertThat(Instruments.contains(p)).as(p.id()).isTrue();
      assertThat(Engines.role(p.id())).as(p.id()).isNotEqualTo(Engines.Role.KV4J);
      StoreConfig.Builder b =
          StoreConfig.builderFor(p).path(dir.resolve(p.id())).durability(Durability.BUFFERED);
      if (p.id().equals("chronicle-map")) {
        b.option("entries", "1000");
      }
      try (Store s = Rig.open(b.build())) {
        s.put(k, k);
        assertThat(s.get(k)).as(p.id()).containsExactly(k);
      }
    }
  }

  @Test
  void provider_fallsBackToTheRegistry_andListsEveryIdWhenUnknown() {
    assertThat(Instruments.provider("hashlog")).isSameAs(Stores.provider("hashlog"));
    assertThat(Instruments.contains(Stores.provider("hashlog"))).isFalse();
    assertThat(Instruments.provider(" MapDB ").id()).isEqualTo("mapdb");
    assertThatThrownBy(() -> Engines.select(Options.parse("--engines", "mapdbb")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown engine 'mapdbb'; available: ")
        .hasMessageContaining("floor, floor-crc, hashlog")
        .hasMessageContaining("lmdb, lmdb-raw, lsm, mapdb, mariadb")
        .hasMessageContaining("mvstore")
        .hasMessageContaining("rocksdb, rocksdb-raw, sqlite, sqlite-raw");
  }

  @Test
  void list_showsTheInstrumentsBesideTheEngines() {
    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
    Engines.list(new java.io.PrintStream(bytes, true, StandardCharsets.UTF_8));
    List<String> headings =
        bytes.toString(StandardCharsets.UTF_8).lines().filter(l -> !l.startsWith(" ")).toList();
    for (String id : IDS) {
      assertThat(headings).as(id).anyMatch(l -> l.startsWith(id + " - "));
    }
    assertThat(headings).anyMatch(l -> l.startsWith("hashlog - "));
  }
}
