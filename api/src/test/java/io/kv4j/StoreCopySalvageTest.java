package io.kv4j;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class StoreCopySalvageTest {
  private static final StoreConfig SOURCE = StoreConfig.parse("salvage-probe:/broken/store");
  private static final DamagedRegion REGION =
      new DamagedRegion(
          Path.of("/broken/store/000001.seg"), 4096, 300, null, 1, null, "record checksum fails");

  @AfterEach
  void reset() {
    SalvageProbeProvider.script = sink -> {};
    SalvageProbeProvider.damage = List.of();
    synchronized (SalvageProbeProvider.calls) {
      SalvageProbeProvider.calls.clear();
    }
  }

  private static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }

  @Test
  void salvage_entriesAndKeyspaces_landInTargetAndDamageIsReturned() {
    SalvageProbeProvider.script =
        sink -> {
          sink.entry(null, b("b"), b("2"));
          sink.entry("users", b("u1"), b("alice"));
          sink.entry(null, b("a"), b("1"));
          sink.entry("users", b("u2"), b("bob"));
          sink.entry("orders", b("o1"), b("x"));
        };
    SalvageProbeProvider.damage = List.of(REGION);
    try (Store to = Stores.open("memory:")) {
      StoreCopy.Salvaged r = StoreCopy.salvage(SOURCE, to, StoreCopy.Options.defaults());

      assertThat(r.entries()).isEqualTo(5);
      assertThat(r.bytes()).isEqualTo(2 + 2 + 7 + 5 + 3);
      assertThat(r.keyspaces()).containsExactly("orders", "users");
      assertThat(r.damage()).containsExactly(REGION);
      assertThat(r.intact()).isFalse();
      assertThat(to.get(b("a"))).isEqualTo(b("1"));
      assertThat(to.get(b("b"))).isEqualTo(b("2"));
      try (Store users = to.keyspace("users");
          Store orders = to.keyspace("orders")) {
        assertThat(users.get(b("u1"))).isEqualTo(b("alice"));
        assertThat(users.get(b("u2"))).isEqualTo(b("bob"));
        assertThat(orders.get(b("o1"))).isEqualTo(b("x"));
        assertThat(to.get(b("u1")))
            .as("keyspace entries stay out of the store's own keys")
            .isNull();
      }
    }
  }

  @Test
  void salvage_sourceConfig_isReadOnlyAndNeverCreates() {
    try (Store to = Stores.open("memory:")) {
      StoreCopy.salvage(
          StoreConfig.parse("salvage-probe:/broken/store?create-if-missing=true"),
          to,
          StoreCopy.Options.defaults());
    }
    assertThat(SalvageProbeProvider.calls).hasSize(1);
    StoreConfig seen = SalvageProbeProvider.calls.get(0);
    assertThat(seen.readOnly()).isTrue();
    assertThat(seen.createIfMissing()).isFalse();
    assertThat(seen.path()).isEqualTo(Path.of("/broken/store"));
  }

  @Test
  void salvage_smallBatches_writeEverythingAndReportProgress() {
    SalvageProbeProvider.script =
        sink -> {
          for (int i = 0; i < 7; i++) {
            sink.entry(null, b("k" + i), b("v" + i));
          }
        };
    List<StoreCopy.Progress> seen = new ArrayList<>();
    try (Store to = Stores.open("memory:")) {
      StoreCopy.Salvaged r =
          StoreCopy.salvage(
              SOURCE, to, StoreCopy.Options.defaults().batchEntries(3).listener(seen::add));

      assertThat(r.entries()).isEqualTo(7);
      assertThat(r.intact()).isTrue();
      for (int i = 0; i < 7; i++) {
        assertThat(to.get(b("k" + i))).as("key k%d", i).isEqualTo(b("v" + i));
      }
    }
    assertThat(seen).extracting(StoreCopy.Progress::entries).containsExactly(3L, 6L, 7L, 7L);
    assertThat(seen.get(seen.size() - 1).done()).isTrue();
  }

  @Test
  void salvage_nonEmptyTarget_isRefusedBeforeTheSourceIsRead() {
    try (Store to = Stores.open("memory:")) {
      to.put(b("x"), b("y"));
      assertThatThrownBy(() -> StoreCopy.salvage(SOURCE, to, StoreCopy.Options.defaults()))
          .isInstanceOf(IllegalStateException.class);
    }
    assertThat(SalvageProbeProvider.calls).isEmpty();
  }

  @Test
  void salvage_engineWithoutSalvage_namesTheEngine() {
    try (Store to = Stores.open("memory:")) {
      assertThatThrownBy(
              () ->
                  StoreCopy.salvage(StoreConfig.parse("memory:"), to, StoreCopy.Options.defaults()))
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("'memory' cannot salvage");
    }
  }

  @Test
  void corruptedException_listsEveryRegion_firstIsFileAndOffset() {
    DamagedRegion second = DamagedRegion.at(Path.of("/broken/store/000002.seg"), 10, "bad length");
    StoreCorruptedException e =
        new StoreCorruptedException("2 damaged regions", List.of(REGION, second));
    assertThat(e.damage()).containsExactly(REGION, second);
    assertThat(e.file()).isEqualTo(REGION.file());
    assertThat(e.offset()).isEqualTo(4096);
    assertThatThrownBy(() -> new StoreCorruptedException("none", List.of()))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(new StoreCorruptedException("one", null, -1).damage())
        .singleElement()
        .satisfies(d -> assertThat(d.problem()).isEqualTo("one"));
  }

  @Test
  void damagedRegion_describe_saysWhereWhatAndLoss() {
    assertThat(REGION.describe())
        .isEqualTo(
            "/broken/store/000001.seg at byte 4096 (300 bytes): record checksum fails; 1 entry lost");
    DamagedRegion page =
        new DamagedRegion(
            Path.of("/d/data.mdb"),
            8192,
            4096,
            "users",
            -1,
            KeyRange.between(b("a"), b("c")),
            "page header damaged");
    assertThat(page.describe()).contains("keyspace 'users'").contains("lost keys in");
    assertThatThrownBy(() -> new DamagedRegion(Path.of("/f"), -2, -1, null, -1, null, "x"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
