package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ZipfianTest {
  @Test
  void next_staysInRange_andFavoursLowRanks() {
    long seed = 11;
    Zipfian z = new Zipfian(10_000, Zipfian.THETA);
    SplittableRandom r = new SplittableRandom(seed);
    int[] counts = new int[10_000];
    for (int i = 0; i < 200_000; i++) {
      long k = z.next(r.nextDouble());
      assertThat(k).as("seed %d", seed).isBetween(0L, 9_999L);
      counts[(int) k]++;
    }
    assertThat(counts[0]).as("seed %d", seed).isGreaterThan(counts[1]).isGreaterThan(10_000);
    assertThat(counts[1]).as("seed %d", seed).isGreaterThan(counts[100]);
  }

  @Test
  void scrambled_spreadsHotKeysOverTheKeySpace() {
    Zipfian z = new Zipfian(100_000, Zipfian.THETA);
    long hottest = z.scrambled(0.0);
    assertThat(hottest).isBetween(0L, 99_999L).isNotZero();
  }
}
