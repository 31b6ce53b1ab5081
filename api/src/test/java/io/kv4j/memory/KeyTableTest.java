package io.kv4j.memory;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class KeyTableTest {
  /** A key as a map key: the bytes, by content. */
  private record Bytes(byte[] b) {
    @Override
    public boolean equals(Object o) {
      return o instanceof Bytes x && Arrays.equals(b, x.b);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(b);
    }
  }

  /**
   * Random puts, overwrites and removes (growing the table, then shrinking it) match a {@link
   * HashMap}, key for key, including keys whose byte hashes collide.
   */
  @Test
  void randomOperations_matchAHashMap_throughGrowthAndShrinking() {
    long seed = 20261207L;
    SplittableRandom r = new SplittableRandom(seed);
    KeyTable t = new KeyTable();
    Map<Bytes, byte[]> model = new HashMap<>();
    int maxCapacity = 0;
    for (int step = 0; step < 400_000; step++) {
      int phase = step / 100_000; // 0, 2: mostly puts; 1, 3: mostly removes
      byte[] k = key(r.nextInt(20_000));
      int op = r.nextInt(100);
      boolean put = phase % 2 == 0 ? op < 70 : op < 25;
      if (put) {
        byte[] v = ByteBuffer.allocate(4).putInt(step).array();
        byte[] old = t.put(k, v);
        assertThat(old)
            .as("put at step %d (seed %d)", step, seed)
            .isEqualTo(model.put(new Bytes(k), v));
      } else {
        assertThat(t.remove(k))
            .as("remove at step %d (seed %d)", step, seed)
            .isEqualTo(model.remove(new Bytes(k)));
      }
      assertThat(t.get(k))
          .as("get at step %d (seed %d)", step, seed)
          .isEqualTo(model.get(new Bytes(k)));
      assertThat(t.size()).as("size at step %d (seed %d)", step, seed).isEqualTo(model.size());
      maxCapacity = Math.max(maxCapacity, t.capacity());
      if (step % 50_000 == 49_999) {
        Map<Bytes, byte[]> seen = new HashMap<>();
        t.forEach((key, value) -> assertThat(seen.put(new Bytes(key), value)).isNull());
        assertThat(seen.keySet())
            .as("keys at step %d (seed %d)", step, seed)
            .isEqualTo(model.keySet());
        model.forEach(
            (key, value) ->
                assertThat(t.get(key.b())).as("value (seed %d)", seed).isEqualTo(value));
      }
    }
    assertThat(maxCapacity).as("the table grew").isGreaterThanOrEqualTo(16_384);
    while (!model.isEmpty()) {
      Bytes k = model.keySet().iterator().next();
      assertThat(t.remove(k.b())).isEqualTo(model.remove(k));
    }
    assertThat(t.size()).isZero();
    assertThat(t.capacity()).as("shrunk back when emptied").isEqualTo(KeyTable.MIN_CAPACITY);
  }

  /**
   * Keys with equal byte hashes (and so equal hash words) are kept apart and removed one by one.
   */
  @Test
  void collidingKeys_areKeptApart() {
    KeyTable t = new KeyTable();
    // Three-byte keys {a, b, c} with equal Arrays.hashCode (961a + 31b + c): the largest such
    // group.
    Map<Integer, java.util.List<byte[]>> byHash = new HashMap<>();
    for (int a = -20; a <= 20; a++) {
      for (int b = -60; b <= 60; b++) {
        for (int c = -60; c <= 60; c++) {
          byte[] k = {(byte) a, (byte) b, (byte) c};
          byHash.computeIfAbsent(Arrays.hashCode(k), h -> new java.util.ArrayList<>()).add(k);
        }
      }
    }
    byte[][] keys =
        byHash.values().stream()
            .max(java.util.Comparator.comparingInt(java.util.List::size))
            .orElseThrow()
            .toArray(new byte[0][]);
    assertThat(keys.length).isGreaterThanOrEqualTo(12);
    for (byte[] k : keys) {
      assertThat(KeyTable.hash(k)).isEqualTo(KeyTable.hash(keys[0]));
    }
    for (int i = 0; i < keys.length; i++) {
      assertThat(t.put(keys[i], new byte[] {(byte) i})).isNull();
    }
    for (int i = 0; i < keys.length; i += 2) {
      assertThat(t.remove(keys[i])).containsExactly((byte) i);
    }
    for (int i = 0; i < keys.length; i++) {
      assertThat(t.get(keys[i]))
          .as("key %d", i)
          .isEqualTo(i % 2 == 0 ? null : new byte[] {(byte) i});
    }
    assertThat(t.size()).isEqualTo(keys.length / 2);
  }

  private static byte[] key(int n) {
    // Short keys of varied length, many sharing prefixes.
    int len = 1 + (n % 7);
    byte[] k = new byte[len];
    for (int i = 0; i < len; i++) {
      k[i] = (byte) (n >>> (3 * i));
    }
    return k;
  }
}
