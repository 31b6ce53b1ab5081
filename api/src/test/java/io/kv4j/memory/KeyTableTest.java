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
        int old = t.put(k, v);
        assertThat(old)
            .as("put at step %d (seed %d)", step, seed)
            .isEqualTo(length(model.put(new Bytes(k), v)));
      } else {
        assertThat(t.remove(k))
            .as("remove at step %d (seed %d)", step, seed)
            .isEqualTo(length(model.remove(new Bytes(k))));
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
      assertThat(t.remove(k.b())).isEqualTo(length(model.remove(k)));
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
      assertThat(t.put(keys[i], new byte[] {(byte) i})).isEqualTo(-1);
    }
    for (int i = 0; i < keys.length; i += 2) {
      assertThat(t.get(keys[i])).containsExactly((byte) i);
      assertThat(t.remove(keys[i])).isEqualTo(1);
    }
    for (int i = 0; i < keys.length; i++) {
      assertThat(t.get(keys[i]))
          .as("key %d", i)
          .isEqualTo(i % 2 == 0 ? null : new byte[] {(byte) i});
    }
    assertThat(t.size()).isEqualTo(keys.length / 2);
  }

  /**
   * Overwrites and removes of values from empty to larger than {@link Arena#LARGE} keep every value
   * intact while the arena's pages are cleaned and reused, and the memory held stays within the
   * bound: at most about half the live bytes dead, beside the slack and the current page.
   */
  @Test
  void churn_keepsValuesIntact_andHeldMemoryBounded() {
    long seed = 20261208L;
    SplittableRandom r = new SplittableRandom(seed);
    KeyTable t = new KeyTable();
    Map<Bytes, byte[]> model = new HashMap<>();
    long written = 0;
    for (int step = 0; step < 300_000; step++) {
      byte[] k = key(r.nextInt(3_000));
      if (r.nextInt(10) == 0) {
        assertThat(t.remove(k))
            .as("remove at step %d (seed %d)", step, seed)
            .isEqualTo(length(model.remove(new Bytes(k))));
      } else {
        int n = r.nextInt(1000) == 0 ? Arena.LARGE + r.nextInt(5000) : r.nextInt(300);
        byte[] v = new byte[n];
        r.nextBytes(v);
        written += n;
        assertThat(t.put(k, v))
            .as("put at step %d (seed %d)", step, seed)
            .isEqualTo(length(model.put(new Bytes(k), v)));
      }
      if (step % 997 == 0) {
        byte[] probe = key(r.nextInt(3_000));
        assertThat(t.get(probe))
            .as("get at step %d (seed %d)", step, seed)
            .isEqualTo(model.get(new Bytes(probe)));
        Arena a = t.arena();
        assertThat(a.deadBytes())
            .as("dead bytes at step %d, live %d (seed %d)", step, a.liveBytes(), seed)
            .isLessThanOrEqualTo(Math.max(Arena.SLACK, a.liveBytes() / 2) + 2L * Arena.MAX_PAGE);
      }
    }
    assertThat(written).as("the churn wrote many times what is held").isGreaterThan(40L << 20);
    long payload = 0;
    for (Map.Entry<Bytes, byte[]> e : model.entrySet()) {
      assertThat(t.get(e.getKey().b())).as("value (seed %d)", seed).isEqualTo(e.getValue());
      payload += Arena.HEADER + e.getKey().b().length + e.getValue().length;
    }
    assertThat(t.arena().heldBytes())
        .as("held for %d bytes of entries (seed %d)", payload, seed)
        .isLessThanOrEqualTo(payload * 3 / 2 + Arena.SLACK + (2L + Arena.SPARES) * Arena.MAX_PAGE);
    while (!model.isEmpty()) {
      Bytes k = model.keySet().iterator().next();
      assertThat(t.remove(k.b())).isEqualTo(length(model.remove(k)));
    }
    assertThat(t.arena().heldBytes())
        .as("emptied: at most the current page, the spares and the slack")
        .isLessThanOrEqualTo(Arena.SLACK + (1L + Arena.SPARES) * Arena.MAX_PAGE);
  }

  /** A conditional check compares in place: present, absent and different values. */
  @Test
  void holds_comparesTheStoredValue() {
    KeyTable t = new KeyTable();
    byte[] k = {1, 2};
    assertThat(t.holds(k, null)).isTrue();
    assertThat(t.holds(k, new byte[0])).isFalse();
    t.put(k, new byte[0]);
    assertThat(t.holds(k, new byte[0])).isTrue();
    assertThat(t.holds(k, null)).isFalse();
    t.put(k, new byte[] {7, 8});
    assertThat(t.holds(k, new byte[] {7, 8})).isTrue();
    assertThat(t.holds(k, new byte[] {7, 9})).isFalse();
    assertThat(t.holds(k, new byte[] {7})).isFalse();
  }

  private static int length(byte[] value) {
    return value == null ? -1 : value.length;
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
