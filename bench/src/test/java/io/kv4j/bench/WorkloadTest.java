package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A worker runs a scenario's mix from the catalogue: the share of each operation, the keys of the
 * distribution, the key counts of scans and multi-gets. Counted on the memory engine through a
 * recording proxy; seeded, so the counts are the same on every run.
 */
class WorkloadTest {
  private static final int KEYS = 1000;
  private static final long SEED = 20_261_202L;

  private final Data data = new Data(16, 32, false, 3);
  private final Store memory = Stores.open(StoreConfig.builder("memory").build());
  private final Map<String, Integer> calls = new TreeMap<>();
  private final List<Long> scanLimits = new ArrayList<>();
  private final List<Long> readKeys = new ArrayList<>();
  private final Store store = recording(memory);

  private Store recording(Store target) {
    return (Store)
        Proxy.newProxyInstance(
            Store.class.getClassLoader(),
            new Class<?>[] {Store.class},
            (proxy, m, args) -> {
              calls.merge(m.getName(), 1, Integer::sum);
              if (m.getName().equals("scan")) {
                scanLimits.add(((KeyRange) args[0]).limitValue());
              }
              if (m.getName().equals("get")) {
                readKeys.add(Data.indexOf((byte[]) args[0]));
              }
              try {
                return m.invoke(target, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }

  private Workload loaded() {
    for (long i = 0; i < KEYS; i++) {
      memory.put(data.key(i), data.value(i, 1));
    }
    return new Workload(store, data, KEYS);
  }

  private static Scenario scenario(String id) {
    return Catalogue.standard().byId(id);
  }

  @AfterEach
  void close() {
    memory.close();
  }

  @Test
  void op_ycsbA_halfReadsHalfUpdatesOfLoadedKeys() {
    Workload wl = loaded();
    Workload.Worker w = wl.worker(SEED);
    for (int i = 0; i < 10_000; i++) {
      w.op(scenario("ycsb-a"));
    }
    int gets = calls.getOrDefault("get", 0);
    assertThat(gets + wl.writes()).as("seed %d", SEED).isEqualTo(10_000);
    assertThat(gets).as("seed %d", SEED).isBetween(4_700, 5_300);
    assertThat(readKeys).allMatch(k -> k >= 0 && k < KEYS);
    assertThat(wl.liveKeys()).as("updates insert nothing").isEqualTo(KEYS);
  }

  @Test
  void op_zipfian_favoursFewKeys_uniformSpreadsThem() {
    Workload.Worker w = loaded().worker(SEED);
    for (int i = 0; i < 5_000; i++) {
      w.op(scenario("ycsb-c"));
    }
    long zipfDistinct = readKeys.stream().distinct().count();
    readKeys.clear();
    for (int i = 0; i < 5_000; i++) {
      w.op(scenario("readrandom"));
    }
    long uniformDistinct = readKeys.stream().distinct().count();
    assertThat(uniformDistinct).as("seed %d", SEED).isGreaterThan(990);
    assertThat(zipfDistinct).as("seed %d", SEED).isLessThan(uniformDistinct * 9 / 10);
  }

  @Test
  void op_ycsbD_insertsNewKeysAndReadsOnlyCompleteOnes() {
    Workload wl = loaded();
    Workload.Worker w = wl.worker(SEED);
    for (int i = 0; i < 4_000; i++) {
      w.op(scenario("ycsb-d"));
    }
    long inserts = wl.writes();
    assertThat(inserts).as("seed %d", SEED).isBetween(120L, 280L);
    assertThat(wl.liveKeys()).isEqualTo(KEYS + inserts);
    assertThat(calls.get("get")).isEqualTo(4_000 - (int) inserts);
    // Reads of the latest keys: most land in the newest tenth.
    long recent = readKeys.stream().filter(k -> k >= wl.liveKeys() - 200).count();
    assertThat(recent).as("seed %d", SEED).isGreaterThan(readKeys.size() / 2);
  }

  @Test
  void op_scansAndMultigets_useTheKeyCountsOfTheMix() {
    Workload.Worker w = loaded().worker(SEED);
    for (int i = 0; i < 500; i++) {
      w.op(scenario("ycsb-e"));
    }
    assertThat(scanLimits).allMatch(n -> n >= 1 && n <= 100);
    assertThat(scanLimits.stream().distinct().count()).as("seed %d", SEED).isGreaterThan(50);
    scanLimits.clear();
    w.op(scenario("scan"));
    assertThat(scanLimits).containsExactly(100L);
    w.op(scenario("multiget"));
    assertThat(calls.get("getAll")).isEqualTo(1);
  }

  @Test
  void op_readModifyWrite_readsThenWritesTheSameKey() {
    Workload wl = loaded();
    Workload.Worker w = wl.worker(SEED);
    for (int i = 0; i < 1_000; i++) {
      w.op(scenario("ycsb-f"));
    }
    // Each operation reads once; half of them also write.
    assertThat(calls.get("get")).isEqualTo(1_000);
    assertThat(wl.writes()).as("seed %d", SEED).isBetween(400L, 600L);
  }

  @Test
  void op_scenarioWithoutAMix_isRefused() {
    Workload.Worker w = loaded().worker(SEED);
    assertThatThrownBy(() -> w.op(scenario("footprint")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("footprint is not a per-operation scenario");
  }

  @Test
  void op_aWrongValue_failsTheRead() {
    Workload.Worker w = loaded().worker(SEED);
    byte[] wrong = data.value(7, 1);
    wrong[wrong.length - 1] ^= 1;
    for (long i = 0; i < KEYS; i++) {
      memory.put(data.key(i), wrong);
    }
    assertThatThrownBy(() -> w.op(scenario("readrandom")))
        .isInstanceOf(Data.VerificationException.class);
  }
}
