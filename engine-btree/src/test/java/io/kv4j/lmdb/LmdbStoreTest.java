package io.kv4j.lmdb;

import static io.kv4j.lmdb.Lmdb.b;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Cursor;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.WriteBatch;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LmdbStoreTest {
  @TempDir Path dir;

  @Test
  void putGetDelete_roundTripAndReturnFreshArrays() {
    try (Store s = Lmdb.open(dir)) {
      byte[] v = b("value");
      s.put(b("a"), v);
      v[0] = 'X';
      byte[] got = s.get(b("a"));
      assertThat(got).isEqualTo(b("value"));
      got[0] = 'Y';
      assertThat(s.get(b("a"))).isEqualTo(b("value"));
      s.put(b("a"), new byte[0]);
      assertThat(s.get(b("a"))).isEmpty();
      s.delete(b("a"));
      s.delete(b("absent"));
      assertThat(s.get(b("a"))).isNull();
    }
  }

  @Test
  void keyOverLimit_isRejectedUpFrontWithTheLimit() {
    try (Store s = Lmdb.open(dir)) {
      s.put(new byte[511], b("ok"));
      assertThat(s.get(new byte[511])).isEqualTo(b("ok"));
      assertThatThrownBy(() -> s.put(new byte[512], b("x")))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("512 bytes")
          .hasMessageContaining("511");
      assertThatThrownBy(() -> s.get(new byte[512])).isInstanceOf(IllegalArgumentException.class);
      assertThat(s.info().limits().maxKeySize()).isEqualTo(511);
    }
  }

  @Test
  void maxValue_256MiB_roundTrips() {
    try (Store s = Lmdb.open(dir)) {
      byte[] big = new byte[s.info().limits().maxValueSize()];
      assertThat(big.length).isEqualTo(256 << 20);
      big[0] = 1;
      big[big.length - 1] = 2;
      s.put(b("big"), big);
      big = null;
      byte[] got = s.get(b("big"));
      assertThat(got).hasSize(256 << 20);
      assertThat(got[0]).isEqualTo((byte) 1);
      assertThat(got[got.length - 1]).isEqualTo((byte) 2);
      got = null;
      s.delete(b("big"));
      assertThatThrownBy(() -> s.put(b("x"), new byte[(256 << 20) + 1]))
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Test
  void scans_matchAnOrderedModelForRandomBoundsAndDirections() {
    long seed = new Random().nextLong();
    Random rnd = new Random(seed);
    NavigableMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
    try (Store s = Lmdb.open(dir)) {
      WriteBatch batch = new WriteBatch();
      for (int i = 0; i < 600; i++) {
        byte[] k = randomKey(rnd);
        byte[] v = new byte[rnd.nextInt(40)];
        rnd.nextBytes(v);
        model.put(k, v);
        batch.put(k, v);
      }
      s.write(batch);
      List<byte[]> keys = new ArrayList<>(model.keySet());
      for (int round = 0; round < 400; round++) {
        KeyRange r = KeyRange.all();
        NavigableMap<byte[], byte[]> view = model;
        byte[] lo = rnd.nextBoolean() ? pick(rnd, keys) : null;
        byte[] hi = rnd.nextBoolean() ? pick(rnd, keys) : null;
        boolean loInc = rnd.nextBoolean();
        boolean hiInc = rnd.nextBoolean();
        if (lo != null) {
          r = loInc ? r.gte(lo) : r.gt(lo);
        }
        if (hi != null) {
          r = hiInc ? r.lte(hi) : r.lt(hi);
        }
        if (rnd.nextBoolean()) {
          r = r.reverse();
        }
        long limit = rnd.nextInt(4) == 0 ? rnd.nextInt(20) : Long.MAX_VALUE;
        r = r.limit(limit);
        List<Entry> expected = new ArrayList<>();
        if (!r.isEmpty()) {
          if (lo != null && hi != null) {
            view = model.subMap(lo, loInc, hi, hiInc);
          } else if (lo != null) {
            view = model.tailMap(lo, loInc);
          } else if (hi != null) {
            view = model.headMap(hi, hiInc);
          }
          for (Map.Entry<byte[], byte[]> e :
              (r.isReverse() ? view.descendingMap() : view).entrySet()) {
            if (expected.size() >= limit) {
              break;
            }
            expected.add(new Entry(e.getKey(), e.getValue()));
          }
        }
        List<Entry> actual = new ArrayList<>();
        try (Cursor c = s.scan(r)) {
          c.forEachRemaining(actual::add);
        }
        assertThat(actual).as("seed %d range %s", seed, r).isEqualTo(expected);
      }
    }
  }

  @Test
  void scan_boundsThatAreNotKeys_andPrefixes() {
    try (Store s = Lmdb.open(dir)) {
      for (String k : new String[] {"a", "ab", "abc", "b", "ba", "c"}) {
        s.put(b(k), b(k));
      }
      assertThat(keys(s, KeyRange.all().gt(b("aa")).lt(b("bb"))))
          .containsExactly("ab", "abc", "b", "ba");
      assertThat(keys(s, KeyRange.all().gt(b("aa")).lt(b("bb")).reverse()))
          .containsExactly("ba", "b", "abc", "ab");
      assertThat(keys(s, KeyRange.all().lte(b("zz")).reverse().limit(2)))
          .containsExactly("c", "ba");
      assertThat(keys(s, KeyRange.all().gte(b("zz")))).isEmpty();
      assertThat(keys(s, KeyRange.all().lt(b("a")).reverse())).isEmpty();
      assertThat(keys(s, KeyRange.prefix(b("ab")))).containsExactly("ab", "abc");
      assertThat(keys(s, KeyRange.prefix(b("ab")).reverse())).containsExactly("abc", "ab");
      assertThat(keys(s, KeyRange.between(b("b"), b("b")))).isEmpty();
    }
  }

  @Test
  void scan_boundsLongerThanAnyKeyOrEmpty_workExactly() {
    try (Store s = Lmdb.open(dir)) {
      byte[] max = new byte[511];
      Arrays.fill(max, (byte) 7);
      byte[] below = Arrays.copyOf(max, 510);
      byte[] above = max.clone();
      above[510] = 8;
      byte[] longBound = Arrays.copyOf(max, 700); // max followed by zeros: just above max
      s.put(below, b("below"));
      s.put(max, b("max"));
      s.put(above, b("above"));
      s.put(b("z"), b("z"));
      assertThat(values(s, KeyRange.all().gte(longBound))).containsExactly("above", "z");
      assertThat(values(s, KeyRange.all().gt(longBound))).containsExactly("above", "z");
      assertThat(values(s, KeyRange.all().lte(longBound))).containsExactly("below", "max");
      assertThat(values(s, KeyRange.all().lt(longBound).reverse())).containsExactly("max", "below");
      assertThat(values(s, KeyRange.all().gte(longBound).reverse())).containsExactly("z", "above");
      assertThat(values(s, KeyRange.all().lte(longBound).reverse()))
          .containsExactly("max", "below");
      assertThat(values(s, KeyRange.prefix(longBound))).isEmpty();
      assertThat(values(s, KeyRange.prefix(max))).containsExactly("max");
      assertThat(values(s, KeyRange.all().gte(new byte[0]))).hasSize(4);
      assertThat(values(s, KeyRange.all().gt(new byte[0]).reverse())).hasSize(4);
      assertThat(values(s, KeyRange.all().lte(new byte[0]))).isEmpty();
      assertThat(values(s, KeyRange.all().lte(new byte[0]).reverse())).isEmpty();
      assertThat(values(s, KeyRange.all().lt(new byte[2000]).reverse()))
          .isEmpty(); // every stored key starts with 7 or 'z', above 0x00...
    }
  }

  private static List<String> values(Store s, KeyRange r) {
    List<String> out = new ArrayList<>();
    s.forEach(r, e -> out.add(Lmdb.s(e.value())));
    return out;
  }

  @Test
  void scan_keysCompareUnsigned() {
    try (Store s = Lmdb.open(dir)) {
      s.put(new byte[] {(byte) 0x80}, b("hi"));
      s.put(new byte[] {0x01}, b("lo"));
      s.put(new byte[] {0x01, 0x00}, b("lo0"));
      List<byte[]> ks = new ArrayList<>();
      s.forEach(KeyRange.all(), e -> ks.add(e.key()));
      assertThat(ks)
          .containsExactly(new byte[] {0x01}, new byte[] {0x01, 0x00}, new byte[] {(byte) 0x80});
    }
  }

  @Test
  void cursor_isASnapshot() {
    try (Store s = Lmdb.open(dir)) {
      s.put(b("a"), b("1"));
      s.put(b("b"), b("1"));
      try (Cursor c = s.scan(KeyRange.all())) {
        s.put(b("a"), b("2"));
        s.delete(b("b"));
        s.put(b("c"), b("new"));
        List<Entry> seen = new ArrayList<>();
        c.forEachRemaining(seen::add);
        assertThat(seen).containsExactly(new Entry(b("a"), b("1")), new Entry(b("b"), b("1")));
      }
      assertThat(keys(s, KeyRange.all())).containsExactly("a", "c");
    }
  }

  @Test
  void batch_appliesInOrderAsOneTransaction() {
    try (Store s = Lmdb.open(dir)) {
      s.put(b("gone"), b("x"));
      long txnBefore = Lmdb.figure(s, "last-txn-id");
      s.write(
          new WriteBatch()
              .put(b("k"), b("1"))
              .delete(b("k"))
              .put(b("j"), b("2"))
              .delete(b("gone"))
              .put(b("j"), b("3")));
      assertThat(Lmdb.figure(s, "last-txn-id")).isEqualTo(txnBefore + 1);
      assertThat(s.get(b("k"))).isNull();
      assertThat(s.get(b("j"))).isEqualTo(b("3"));
      assertThat(s.get(b("gone"))).isNull();
    }
  }

  @Test
  void stats_reportEntriesMapAndReaderSlots() {
    try (Store s = Lmdb.open(dir, "map-size", "8MiB")) {
      for (int i = 0; i < 100; i++) {
        s.put(b("k" + i), new byte[100]);
      }
      var st = s.stats();
      assertThat(st.keyCount()).isEqualTo(100);
      assertThat(st.keyCountExact()).isTrue();
      assertThat(st.diskBytes()).isGreaterThan(0);
      assertThat(st.figures().get("map-size-bytes").longValue()).isEqualTo(8L << 20);
      assertThat(st.figures().get("map-used-bytes").longValue())
          .isGreaterThan(0)
          .isEqualTo(
              st.figures().get("map-used-pages").longValue()
                  * st.figures().get("page-size-bytes").longValue());
      assertThat(st.figures().get("max-readers").longValue()).isEqualTo(1024);
      assertThat(st.figures()).containsKeys("reader-slots-in-use", "reader-slots-high-water");
    }
  }

  @Test
  void sync_isAccepted() {
    try (Store s = Lmdb.open(dir)) {
      s.put(b("k"), b("v"));
      s.sync();
      assertThat(s.get(b("k"))).isEqualTo(b("v"));
    }
  }

  private static List<String> keys(Store s, KeyRange r) {
    List<String> out = new ArrayList<>();
    s.forEach(r, e -> out.add(Lmdb.s(e.key())));
    return out;
  }

  private static byte[] randomKey(Random rnd) {
    byte[] k = new byte[1 + rnd.nextInt(4)];
    for (int i = 0; i < k.length; i++) {
      k[i] = (byte) (rnd.nextBoolean() ? rnd.nextInt(4) : 0xFE + rnd.nextInt(2));
    }
    return k;
  }

  private static byte[] pick(Random rnd, List<byte[]> keys) {
    return rnd.nextBoolean() ? keys.get(rnd.nextInt(keys.size())) : randomKey(rnd);
  }
}
