package io.kv4j.typed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.Stores;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class StoreMapTest {
  private Store store;

  @BeforeEach
  void open() {
    store = Stores.open("memory:");
  }

  @AfterEach
  void close() {
    store.close();
  }

  @Test
  void of_refusesAStoreWithoutOrderedScans() {
    Store unordered = new MaskedStore(store, Feature.ORDERED_SCAN);
    assertThatThrownBy(() -> StoreMap.of(unordered, KeyCodec.longs(), ValueCodec.longs()))
        .isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("ORDERED_SCAN");
  }

  @Test
  void withoutConditionalWrites_atomicOperationsThrowAndPlainOnesWork() {
    StoreMap<Long, String> m =
        StoreMap.of(
            new MaskedStore(store, Feature.CONDITIONAL_WRITE), KeyCodec.longs(), ValueCodec.utf8());
    assertThat(m.put(1L, "a")).isNull();
    assertThat(m.put(1L, "b")).isEqualTo("a");
    assertThat(m.put(2L, "c")).isNull();
    assertThat(m.remove(2L)).isEqualTo("c");
    assertThat(m.pollFirstEntry()).isEqualTo(Map.entry(1L, "b"));
    m.put(3L, "d");
    List<Runnable> atomic =
        List.of(
            () -> m.putIfAbsent(3L, "x"),
            () -> m.remove(3L, "d"),
            () -> m.replace(3L, "x"),
            () -> m.replace(3L, "d", "x"),
            () -> m.computeIfAbsent(4L, k -> "x"),
            () -> m.merge(3L, "x", String::concat),
            () -> m.entrySet().remove(Map.entry(3L, "d")));
    for (Runnable call : atomic) {
      assertThatThrownBy(call::run)
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("CONDITIONAL_WRITE");
    }
    assertThat(m).containsExactly(Map.entry(3L, "d"));
  }

  @Test
  void iteration_crossesPagesAndRemovesThroughTheIterator() {
    StoreMap<Long, Long> m = StoreMap.of(store, KeyCodec.longs(), ValueCodec.longs());
    ConcurrentSkipListMap<Long, Long> model = new ConcurrentSkipListMap<>();
    for (long i = -700; i < 700; i++) {
      m.put(i * 7, i);
      model.put(i * 7, i);
    }
    assertThat(new ArrayList<>(m.entrySet())).isEqualTo(new ArrayList<>(model.entrySet()));
    assertThat(new ArrayList<>(m.descendingMap().keySet()))
        .isEqualTo(new ArrayList<>(model.descendingKeySet()));
    assertThat(m.size()).isEqualTo(1400);
    Iterator<Long> it = m.values().iterator();
    while (it.hasNext()) {
      if (it.next() % 3 == 0) {
        it.remove();
      }
    }
    model.values().removeIf(v -> v % 3 == 0);
    assertThat(m).isEqualTo(model);
    assertThat(m.subMap(0L, 700L).size()).isEqualTo(model.subMap(0L, 700L).size());
    m.tailMap(0L).clear();
    model.tailMap(0L).clear();
    assertThat(new ArrayList<>(m.keySet())).isEqualTo(new ArrayList<>(model.keySet()));
  }

  @Test
  void iterator_isWeaklyConsistentAndSeesEachKeyOnce() {
    StoreMap<Long, Long> m = StoreMap.of(store, KeyCodec.longs(), ValueCodec.longs(), 4);
    for (long i = 0; i < 20; i++) {
      m.put(i * 10, i);
    }
    List<Long> seen = new ArrayList<>();
    Iterator<Long> it = m.keySet().iterator();
    while (it.hasNext()) {
      long k = it.next();
      seen.add(k);
      if (k == 50) { // the page in hand is 40..70
        m.put(155L, 0L); // beyond it: seen
        m.put(5L, 0L); // behind the iterator: not seen
        m.remove(100L); // beyond the page: not seen
        m.remove(60L); // in the page in hand: still returned
      }
    }
    assertThat(seen)
        .isSorted()
        .doesNotHaveDuplicates()
        .contains(155L, 60L)
        .doesNotContain(5L, 100L)
        .hasSize(20);
  }

  @Test
  void merge_losesNoUpdateUnderConcurrentWriters() throws Exception {
    StoreMap<String, Long> m = StoreMap.of(store, KeyCodec.utf8(), ValueCodec.longs());
    int threads = 4;
    int increments = 400;
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        done.add(
            pool.submit(
                () -> {
                  start.await();
                  for (int i = 0; i < increments; i++) {
                    m.merge("counter", 1L, Long::sum);
                    m.compute("other", (k, v) -> v == null ? 1L : v + 1);
                  }
                  return null;
                }));
      }
      start.countDown();
      for (Future<?> f : done) {
        f.get(2, TimeUnit.MINUTES);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(m.get("counter")).isEqualTo((long) threads * increments);
    assertThat(m.get("other")).isEqualTo((long) threads * increments);
  }

  @Test
  void views_shareTheStoreWithOtherMapsAndDirectWrites() {
    StoreMap<String, String> a = StoreMap.of(store, KeyCodec.utf8(), ValueCodec.utf8());
    StoreMap<String, String> b = StoreMap.of(store, KeyCodec.utf8(), ValueCodec.utf8());
    a.put("k", "1");
    assertThat(b.get("k")).isEqualTo("1");
    store.delete("k".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    assertThat(a).isEmpty();
    assertThatThrownBy(() -> a.headMap("m").put("z", "1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("key out of range");
    assertThatThrownBy(() -> a.put(null, "1")).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> a.put("k", null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> a.firstKey()).isInstanceOf(java.util.NoSuchElementException.class);
  }
}
