package io.kv4j;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class ReadViewTest {
  private static final long SEED = 20261206L;

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static Store filled(int n, long seed) {
    Store s = Stores.open("memory:");
    SplittableRandom rnd = new SplittableRandom(seed);
    for (int i = 0; i < n; i++) {
      byte[] value = new byte[rnd.nextInt(20)];
      for (int j = 0; j < value.length; j++) {
        value[j] = (byte) rnd.nextInt(256);
      }
      s.put(b(String.format("k%05d", i)), value);
    }
    return s;
  }

  /** One read-only function over every read of a view, as text to compare. */
  private static String readAll(ReadView v) {
    HexFormat hex = HexFormat.of();
    List<byte[]> keys = List.of(b("k00000"), b("k00007"), b("absent"), b("k00007"));
    StringBuilder out = new StringBuilder();
    out.append("get=")
        .append(v.get(b("k00003")) == null ? "null" : hex.formatHex(v.get(b("k00003"))));
    out.append(" getAll=")
        .append(
            v.getAll(keys).stream()
                .map(x -> x == null ? "null" : hex.formatHex(x))
                .collect(Collectors.toList()));
    out.append(" contains=").append(v.contains(b("k00001"))).append(v.contains(b("absent")));
    List<String> each = new ArrayList<>();
    v.forEach(KeyRange.all().limit(5), e -> each.add(hex.formatHex(e.key())));
    out.append(" forEach=").append(each);
    try (Stream<Entry> s = v.stream(KeyRange.all().reverse().limit(3))) {
      out.append(" stream=")
          .append(s.map(e -> hex.formatHex(e.value())).collect(Collectors.toList()));
    }
    try (Cursor c = v.scan(KeyRange.all())) {
      int n = 0;
      while (c.hasNext()) {
        c.next();
        n++;
      }
      out.append(" scanned=").append(n);
    }
    return out.toString();
  }

  private static void change(Store s) {
    s.put(b("k00003"), b("changed"));
    s.delete(b("k00000"));
    s.delete(b("k00001"));
    s.put(b("k99999"), b("new"));
  }

  @Test
  void readAll_storeAndItsSnapshot_sameAnswersUntilTheStoreChanges() {
    try (Store store = filled(50, SEED)) {
      String before = readAll(store);
      try (Snapshot snap = store.snapshot()) {
        assertThat(readAll(snap)).as("seed %d", SEED).isEqualTo(before);
        change(store);
        assertThat(readAll(store)).as("seed %d", SEED).isNotEqualTo(before);
        assertThat(readAll(snap)).as("seed %d", SEED).isEqualTo(before);
      }
    }
  }

  @Test
  void checksum_snapshotWhileStoreChanges_isTheOldState() {
    try (Store store = filled(300, SEED + 1)) {
      StoreCopy.Checksum old = StoreCopy.checksum(store);
      try (Snapshot snap = store.snapshot()) {
        assertThat(StoreCopy.checksum(snap)).isEqualTo(old);
        change(store);
        assertThat(StoreCopy.checksum(store)).as("seed %d", SEED + 1).isNotEqualTo(old);
        assertThat(StoreCopy.checksum(snap)).as("seed %d", SEED + 1).isEqualTo(old);
      }
    }
  }

  @Test
  void copy_snapshotWhileStoreChangesDuringTheCopy_copiesTheOldStateAndVerifies() {
    try (Store store = filled(3000, SEED + 2);
        Store to = Stores.open("memory:")) {
      StoreCopy.Checksum old = StoreCopy.checksum(store);
      AtomicInteger writes = new AtomicInteger();
      StoreCopy.Result r;
      try (Snapshot snap = store.snapshot()) {
        // The store is written after every batch of the copy: the snapshot must not see it.
        r =
            StoreCopy.copy(
                snap,
                to,
                StoreCopy.Options.defaults()
                    .batchEntries(400)
                    .listener(
                        p -> {
                          int i = writes.incrementAndGet();
                          store.put(b(String.format("k%05d", i * 7)), b("during " + i));
                          store.delete(b(String.format("k%05d", 2999 - i)));
                        }));
      }
      assertThat(writes.get()).isGreaterThan(1);
      assertThat(r.verified()).as("seed %d: %s", SEED + 2, r).isTrue();
      assertThat(r.source()).isEqualTo(old);
      assertThat(StoreCopy.checksum(to)).isEqualTo(old);
      assertThat(StoreCopy.checksum(store)).isNotEqualTo(old);
    }
  }

  @Test
  void copy_storeAndItsSnapshotAsSource_giveTheSameTarget() {
    try (Store store = filled(500, SEED + 3);
        Store a = Stores.open("memory:");
        Store b = Stores.open("memory:");
        Snapshot snap = store.snapshot()) {
      StoreCopy.Result fromStore = StoreCopy.copy(store, a, StoreCopy.Options.defaults());
      StoreCopy.Result fromSnapshot = StoreCopy.copy(snap, b, StoreCopy.Options.defaults());
      assertThat(fromSnapshot.copiedEntries()).isEqualTo(fromStore.copiedEntries()).isEqualTo(500);
      assertThat(fromSnapshot.source()).isEqualTo(fromStore.source());
      assertThat(StoreCopy.checksum(b)).isEqualTo(StoreCopy.checksum(a));
    }
  }

  @Test
  void snapshot_implementingOnlyGetScanAndClose_getsTheReadDefaults() {
    try (Store store = filled(10, SEED + 4)) {
      // A snapshot written directly against the interface: getAll, contains, forEach and stream
      // are defaults it inherits from ReadView.
      Snapshot bare =
          new Snapshot() {
            @Override
            public byte[] get(byte[] key) {
              return store.get(key);
            }

            @Override
            public Cursor scan(KeyRange range) {
              return store.scan(range);
            }

            @Override
            public void close() {}
          };
      assertThat(readAll(bare)).isEqualTo(readAll(store));
    }
  }
}
