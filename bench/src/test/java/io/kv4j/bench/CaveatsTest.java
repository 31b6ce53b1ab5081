package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.Limits;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreInfo;
import io.kv4j.spi.OptionSpec;
import io.kv4j.spi.StoreProvider;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Caveats come from what an engine declares at run time, then from its README. */
class CaveatsTest {
  /** A provider that only declares: features and limits, as a test sets them. */
  record Declared(String id, Set<Feature> features, Limits limits) implements StoreProvider {
    @Override
    public String description() {
      return "declares only";
    }

    @Override
    public List<OptionSpec<?>> options() {
      return List.of();
    }

    @Override
    public Store open(StoreConfig config) {
      throw new UnsupportedOperationException("declares only");
    }
  }

  static final Set<Feature> ALL = EnumSet.allOf(Feature.class);

  static final Limits WIDE = new Limits(64 << 10, 256 << 20);

  static Set<Feature> without(Feature... fs) {
    Set<Feature> s = EnumSet.allOf(Feature.class);
    for (Feature f : fs) {
      s.remove(f);
    }
    return s;
  }

  private static Caveats caveats(Map<String, StoreInfo> infos, StoreProvider... providers) {
    Map<String, StoreProvider> m = new LinkedHashMap<>();
    for (StoreProvider p : providers) {
      m.put(p.id(), p);
    }
    return new Caveats(m, infos);
  }

  @Test
  void of_comesFromWhatTheEngineDeclaresAtRunTime() {
    Caveats c =
        caveats(
            Map.of(),
            new Declared("wide", ALL, WIDE),
            new Declared("narrow", without(Feature.CHECKSUMS), new Limits(511, 256 << 20)),
            new Declared(
                "hashmap",
                without(
                    Feature.ORDERED_SCAN,
                    Feature.REVERSE_SCAN,
                    Feature.SNAPSHOT_SCAN,
                    Feature.ATOMIC_BATCH),
                new Limits(64 << 10, 16 << 20)));
    assertThat(c.of("wide")).isEmpty();
    assertThat(c.of("narrow"))
        .isEqualTo(
            "no checksums (does not declare CHECKSUMS): a damaged record can be read back as a"
                + " wrong value or a missing key; keys up to 511 B (others here: 64 KiB)");
    assertThat(c.of("hashmap"))
        .isEqualTo(
            "no ordered scans; no atomic batches; values up to 16 MiB (others here: 256 MiB)");
  }

  @Test
  void of_sameEngineDeclaringChecksums_losesThatCaveat() {
    // The same id with and without CHECKSUMS: read from the declaration, not from a table.
    Caveats before = caveats(Map.of(), new Declared("lmdb", without(Feature.CHECKSUMS), WIDE));
    Caveats after = caveats(Map.of(), new Declared("lmdb", ALL, WIDE));
    assertThat(before.of("lmdb")).contains("no checksums");
    assertThat(after.of("lmdb"))
        .doesNotContain("checksums")
        .contains("one writer at a time"); // not declarable in the api yet: from the README
  }

  @Test
  void of_storeOpenedWithoutChecksums_winsOverTheProvider() {
    Declared hashlog = new Declared("hashlog", ALL, WIDE);
    assertThat(caveats(Map.of(), hashlog).of("hashlog")).doesNotContain("no checksums");
    StoreInfo info =
        new StoreInfo(
            "hashlog", without(Feature.CHECKSUMS), WIDE, Durability.BUFFERED, "/tmp/x", false);
    assertThat(caveats(Map.of("hashlog", info), hashlog).of("hashlog")).startsWith("no checksums");
  }

  @Test
  void of_onlyEngineAtTheKv4jMinimum_saysSo() {
    Caveats c = caveats(Map.of(), new Declared("tiny", ALL, new Limits(511, 16 << 20)));
    assertThat(c.of("tiny")).isEqualTo("keys up to 511 B (the kv4j minimum)");
  }

  @Test
  void of_notPersistentOrUnknown_saysSoOrNothing() {
    Caveats c =
        caveats(
            Map.of(), new Declared("ram", without(Feature.PERSISTENT, Feature.CHECKSUMS), WIDE));
    assertThat(c.of("ram")).startsWith("not persistent").doesNotContain("checksums");
    assertThat(c.of("nobody")).isEmpty();
  }

  @Test
  void of_realLmdbBesideHashlog_namesItsNarrowerKeysAndSingleWriter() {
    Outcome o = ReportTest.outcome("hashlog,lmdb");
    Caveats c = new Caveats(o.engines(), Map.of());
    assertThat(c.of("lmdb"))
        .contains("keys up to 511 B (others here: 64 KiB)")
        .contains("one writer at a time");
  }
}
