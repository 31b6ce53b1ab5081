package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.WriteBatch;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RandomOperationsTest {
  @TempDir Path dir;

  private static final class Key implements Comparable<Key> {
    final byte[] b;

    Key(byte[] b) {
      this.b = b;
    }

    @Override
    public int compareTo(Key o) {
      return Arrays.compareUnsigned(b, o.b);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Key k && Arrays.equals(b, k.b);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(b);
    }
  }

  @Test
  void randomOperations_matchTreeMap_acrossReopens() {
    for (long seed : new long[] {1, 2, 3}) {
      run(seed, HashLogProvider.seededHasher(seed), false);
    }
  }

  @Test
  void randomOperations_withAllHashesColliding_matchTreeMap() {
    run(7, key -> (key[0] & 0x3) + 1L, false); // 4 distinct hashes for every key
  }

  @Test
  void randomOperations_withCompactionForcedInBetween_matchTreeMap() {
    for (long seed : new long[] {11, 12, 13}) {
      run(seed, HashLogProvider.seededHasher(seed), true);
    }
    run(17, key -> (key[0] & 0x3) + 1L, true);
  }

  @Test
  void randomOperations_withBackgroundCompaction_matchTreeMap() {
    for (long seed : new long[] {21, 22}) {
      run(seed, HashLogProvider.seededHasher(seed), null);
    }
  }

  /**
   * Compacts all, or a random subset of the sealed segments (so tombstones meet older segments that
   * are not compacted with them).
   */
  static void compactRandomly(HashLogStore s, SplittableRandom rnd) {
    if (rnd.nextInt(4) == 0) {
      s.compact();
      return;
    }
    java.util.Set<Integer> ids = new java.util.HashSet<>();
    Segment act = s.activeSegment();
    for (Segment g : s.segments()) {
      if (g != null && g != act && !g.isRetired() && rnd.nextInt(3) == 0) {
        ids.add(g.id);
      }
    }
    s.compactor.compactSegments(ids);
  }

  /**
   * Runs random operations.
   *
   * @param forced true: no background compaction, compaction forced between operations; false: no
   *     compaction; null: background compaction (byte accounting is then not compared across
   *     reopens, since a run may land between the figures and the close)
   */
  private void run(long seed, KeyDir.Hasher hasher, Boolean forced) {
    String msg = "seed " + seed + " compaction " + forced;
    Path d = dir.resolve("s" + seed + "-" + hasher.hashCode());
    SplittableRandom rnd = new SplittableRandom(seed);
    NavigableMap<Key, byte[]> model = new TreeMap<>();
    // Background: one compaction thread, or two (concurrent runs with disjoint victims).
    String threads = forced == null ? String.valueOf(1 + (int) (seed % 2)) : "0";
    HashLogStore s =
        TestStores.open(
            d,
            Durability.BUFFERED,
            hasher,
            "segment-size",
            "8KiB",
            "compaction-threads",
            threads,
            "compaction-garbage-threshold",
            "0.3");
    try {
      for (int op = 0; op < 6000; op++) {
        if (Boolean.TRUE.equals(forced) && rnd.nextInt(60) == 0) {
          compactRandomly(s, rnd);
        }
        int kind = rnd.nextInt(100);
        if (kind < 45) {
          byte[] k = key(rnd);
          byte[] v = value(rnd);
          s.put(k, v);
          model.put(new Key(k), v);
        } else if (kind < 60) {
          byte[] k = key(rnd);
          s.delete(k);
          model.remove(new Key(k));
        } else if (kind < 75) {
          byte[] k = key(rnd);
          byte[] expected = model.get(new Key(k));
          assertThat(s.get(k)).as(msg + " op " + op).isEqualTo(expected);
        } else if (kind < 85) {
          WriteBatch b = new WriteBatch();
          int n = 1 + rnd.nextInt(8);
          for (int i = 0; i < n; i++) {
            byte[] k = key(rnd);
            if (rnd.nextBoolean()) {
              byte[] v = value(rnd);
              b.put(k, v);
              model.put(new Key(k), v);
            } else {
              b.delete(k);
              model.remove(new Key(k));
            }
          }
          s.write(b);
        } else if (kind < 99 || rnd.nextInt(4) != 0) {
          byte[] a = key(rnd);
          byte[] z = key(rnd);
          boolean rev = rnd.nextBoolean();
          KeyRange r = KeyRange.all().gte(a).lt(z);
          NavigableMap<Key, byte[]> sub =
              Arrays.compareUnsigned(a, z) < 0
                  ? model.subMap(new Key(a), true, new Key(z), false)
                  : new TreeMap<>();
          if (rev) {
            r = r.reverse();
            sub = sub.descendingMap();
          }
          List<Entry> expected = new ArrayList<>();
          for (Map.Entry<Key, byte[]> e : sub.entrySet()) {
            expected.add(new Entry(e.getKey().b, e.getValue()));
          }
          assertThat(TestStores.scan(s, r)).as(msg + " op " + op + " " + r).isEqualTo(expected);
        } else {
          Map<String, Number> before = s.stats().figures();
          s.close();
          s =
              TestStores.open(
                  d,
                  Durability.BUFFERED,
                  hasher,
                  "segment-size",
                  "8KiB",
                  "compaction-threads",
                  threads,
                  "compaction-garbage-threshold",
                  "0.3");
          Map<String, Number> after = s.stats().figures();
          for (String f : new String[] {"live-bytes", "dead-bytes", "tombstone-bytes"}) {
            if (forced == null) {
              break;
            }
            assertThat(after.get(f))
                .as(msg + " op " + op + " " + f + " after reopen")
                .isEqualTo(before.get(f));
          }
        }
      }
      List<Entry> all = new ArrayList<>();
      for (Map.Entry<Key, byte[]> e : model.entrySet()) {
        all.add(new Entry(e.getKey().b, e.getValue()));
      }
      assertThat(TestStores.scan(s, KeyRange.all())).as(msg).isEqualTo(all);
      assertThat(s.stats().keyCount()).as(msg).isEqualTo(model.size());
    } finally {
      s.close();
    }
  }

  private static byte[] key(SplittableRandom rnd) {
    byte[] k = new byte[1 + rnd.nextInt(3)];
    for (int i = 0; i < k.length; i++) {
      k[i] = (byte) (rnd.nextInt(6) * 51); // includes 0x00 and 0xFF
    }
    return k;
  }

  private static byte[] value(SplittableRandom rnd) {
    byte[] v = new byte[rnd.nextInt(4) == 0 ? 0 : rnd.nextInt(300)];
    rnd.nextBytes(v);
    return v;
  }
}
