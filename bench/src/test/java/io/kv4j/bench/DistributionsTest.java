package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.bench.Scenario.Distribution;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The generators a workload draws from, against their theory over seeded samples: the share of the
 * most popular item of YCSB's zipfian (computed here from the constant 0.99, not from the code's),
 * YCSB's scrambled zipfian, uniform keys, the latest keys, scan lengths and value sizes.
 */
class DistributionsTest {
  /** YCSB's zipfian constant, written out: a wrong constant in the code must show. */
  private static final double YCSB_THETA = 0.99;

  private static final long SEED = 20_270_101L;
  private static final int DRAWS = 400_000;

  private final Store memory = Stores.open(StoreConfig.builder("memory").build());

  @AfterEach
  void close() {
    memory.close();
  }

  private static double zeta(long n, double theta) {
    double sum = 0;
    for (long i = 1; i <= n; i++) {
      sum += Math.pow(i, -theta);
    }
    return sum;
  }

  @Test
  void zipfian_mostPopularItemsShare_isOneOverZetaOfYcsbsConstant() {
    int n = 1000;
    Zipfian z = new Zipfian(n, Zipfian.THETA);
    SplittableRandom r = new SplittableRandom(SEED);
    int first = 0;
    int second = 0;
    for (int i = 0; i < DRAWS; i++) {
      long k = z.next(r.nextDouble());
      assertThat(k).isBetween(0L, n - 1L);
      first += k == 0 ? 1 : 0;
      second += k == 1 ? 1 : 0;
    }
    double expected = 1 / zeta(n, YCSB_THETA); // 0.1294; with 0.9 it would be 0.0950
    assertThat(first / (double) DRAWS).as("seed %d", SEED).isCloseTo(expected, within(0.004));
    assertThat(second / (double) DRAWS)
        .as("seed %d", SEED)
        .isCloseTo(expected * Math.pow(2, -YCSB_THETA), within(0.004));
  }

  @Test
  void ycsbScrambledZipfian_hottestKeysShare_matchesYcsbsGenerator() {
    int n = 1000;
    // YCSB: a rank among 10^10 items (zeta precomputed as 26.469...), FNV-hashed modulo n. Rank 0
    // alone has 1/zetan = 3.78% of the draws; the hottest key also gets the ranks that hash onto
    // it: those below 10^6 summed exactly, the rest spread evenly.
    long hot = Math.abs(Zipfian.fnv64(0)) % n;
    double zetan = 26.46902820178302;
    double hotShare = 0;
    double head = 0;
    for (long rank = 0; rank < 1_000_000; rank++) {
      double p = Math.pow(rank + 1, -YCSB_THETA) / zetan;
      head += p;
      if (Math.abs(Zipfian.fnv64(rank)) % n == hot) {
        hotShare += p;
      }
    }
    hotShare += (1 - head) / n;
    int[] counts = new int[n];
    SplittableRandom r = new SplittableRandom(SEED);
    for (int i = 0; i < DRAWS; i++) {
      counts[(int) Zipfian.YCSB_SCRAMBLED.hashedOnto(n, r.nextDouble())]++;
    }
    int max = 0;
    for (int c : counts) {
      max = Math.max(max, c);
    }
    assertThat(counts[(int) hot]).as("the hottest key is rank 0's, seed %d", SEED).isEqualTo(max);
    assertThat(counts[(int) hot] / (double) DRAWS)
        .as("seed %d, expected %.4f", SEED, hotShare)
        .isCloseTo(hotShare, within(0.003));
  }

  private Workload.Worker worker(long loaded) {
    Data data = new Data(16, 32, false, 3);
    for (long i = 0; i < loaded; i++) {
      memory.put(data.key(i), data.value(i, 1));
    }
    return new Workload(memory, data, loaded).worker(SEED);
  }

  @Test
  void uniformKeys_areRoughlyFlat() {
    int n = 100;
    Workload.Worker w = worker(n);
    int[] counts = new int[n];
    for (int i = 0; i < DRAWS; i++) {
      counts[(int) w.key(Distribution.UNIFORM)]++;
    }
    for (int k = 0; k < n; k++) {
      assertThat(counts[k])
          .as("key %d, seed %d", k, SEED)
          .isBetween((int) (DRAWS / n * 0.9), (int) (DRAWS / n * 1.1));
    }
  }

  @Test
  void latestKeys_favourTheRecentInserts() {
    int loaded = 1000;
    Workload.Worker w = worker(loaded);
    for (int i = 0; i < 100; i++) {
      w.insert();
    }
    long newest = loaded + 100 - 1;
    int top10 = 0;
    int inserted = 0;
    int oldest100 = 0;
    int draws = 100_000;
    for (int i = 0; i < draws; i++) {
      long k = w.key(Distribution.LATEST);
      assertThat(k).isBetween(0L, newest);
      top10 += k > newest - 10 ? 1 : 0;
      inserted += k >= loaded ? 1 : 0;
      oldest100 += k < 100 ? 1 : 0;
    }
    // Zipfian back from the newest: the 10 newest of 1,000 ranks take sum(i^-0.99, i<=10) / zeta
    // = 0.382 exactly; YCSB's generator (Gray et al.) approximates the ranks above 1, ~0.40.
    double expected = zeta(10, YCSB_THETA) / zeta(loaded, YCSB_THETA);
    assertThat(top10 / (double) draws).as("seed %d", SEED).isCloseTo(expected, within(0.025));
    assertThat(inserted / (double) draws).as("the 100 inserted of 1,100 keys").isGreaterThan(0.5);
    assertThat(oldest100 / (double) draws).as("the 100 oldest").isLessThan(0.05);
  }

  @Test
  void scanLengths_zipfianShortestMostFrequent_uniformFlat() {
    Workload.Worker w = worker(10);
    Mix.Step zipfian = new Mix.Step(1.0, Mix.Operation.SCAN, 1, 100, true);
    Mix.Step uniform = new Mix.Step(1.0, Mix.Operation.SCAN, 1, 100, false);
    int ones = 0;
    int[] flat = new int[101];
    for (int i = 0; i < DRAWS; i++) {
      int z = w.length(zipfian);
      assertThat(z).isBetween(1, 100);
      ones += z == 1 ? 1 : 0;
      flat[w.length(uniform)]++;
    }
    assertThat(ones / (double) DRAWS)
        .as("YCSB's ZipfianGenerator(1, 100): length 1 has 1/zeta(100), seed %d", SEED)
        .isCloseTo(1 / zeta(100, YCSB_THETA), within(0.004));
    for (int len = 1; len <= 100; len++) {
      assertThat(flat[len]).as("length %d, seed %d", len, SEED).isBetween(3_400, 4_600);
    }
  }

  @Test
  void valueSizes_constantUniformAndZipfian_stayInRange_andDataVerifiesThem() {
    SplittableRandom r = new SplittableRandom(SEED);
    ValueSizes constant = new ValueSizes(10, 100, ValueSizes.Shape.CONSTANT);
    assertThat(constant.drawer().next(r)).isEqualTo(1000);
    assertThat(constant.min()).isEqualTo(1000);
    ValueSizes uniform = new ValueSizes(1, 100, ValueSizes.Shape.UNIFORM);
    ValueSizes zipfian = new ValueSizes(1, 100, ValueSizes.Shape.ZIPFIAN);
    ValueSizes.Drawer u = uniform.drawer();
    ValueSizes.Drawer z = zipfian.drawer();
    long sumU = 0;
    int atMinimum = 0;
    int draws = 100_000;
    for (int i = 0; i < draws; i++) {
      int a = u.next(r);
      int b = z.next(r);
      assertThat(a).isBetween(16, 100);
      assertThat(b).isBetween(16, 100);
      sumU += a;
      atMinimum += b == 16 ? 1 : 0;
    }
    // Uniform 1..100 raised to 16: the mean is (15 * 16 + sum(16..100)) / 100 = 51.7.
    assertThat(sumU / (double) draws).as("seed %d", SEED).isCloseTo(51.7, within(0.5));
    // Zipfian 1..100: lengths up to 16 (all raised to 16) take sum(i^-0.99, i<=16) / zeta(100)
    // = 0.646 exactly; YCSB's generator approximates the ranks above 1 (~0.66 here).
    assertThat(atMinimum / (double) draws)
        .as("seed %d", SEED)
        .isCloseTo(zeta(16, YCSB_THETA) / zeta(100, YCSB_THETA), within(0.025));
    Data data = new Data(16, uniform, false, 1);
    byte[] fits = new byte[40];
    data.value(7, 5, fits);
    data.verify(7, fits);
    byte[] tooLong = new byte[101];
    data.value(7, 5, tooLong);
    assertThatThrownBy(() -> data.verify(7, tooLong))
        .hasMessageContaining("value is 101 bytes, expected 16..100");
  }
}
