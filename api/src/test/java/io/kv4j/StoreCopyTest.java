package io.kv4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class StoreCopyTest {
  private static final long SEED = 20261129L;

  private static Store filled(int n, long seed) {
    Store s = Stores.open("memory:");
    SplittableRandom rnd = new SplittableRandom(seed);
    WriteBatch b = new WriteBatch();
    for (int i = 0; i < n; i++) {
      byte[] key = new byte[1 + rnd.nextInt(12)];
      byte[] value = new byte[rnd.nextInt(40)];
      for (int j = 0; j < key.length; j++) {
        key[j] = (byte) rnd.nextInt(256);
      }
      for (int j = 0; j < value.length; j++) {
        value[j] = (byte) rnd.nextInt(256);
      }
      b.put(key, value);
    }
    s.write(b);
    return s;
  }

  private static List<Entry> all(Store s) {
    List<Entry> out = new ArrayList<>();
    s.forEach(KeyRange.all(), out::add);
    return out;
  }

  @Test
  void copy_emptyTarget_copiesEveryEntryAndVerifies() {
    try (Store from = filled(5000, SEED);
        Store to = Stores.open("memory:")) {
      List<StoreCopy.Progress> seen = new ArrayList<>();
      StoreCopy.Result r =
          StoreCopy.copy(
              from, to, StoreCopy.Options.defaults().batchEntries(700).listener(seen::add));

      assertThat(all(to)).as("seed %d", SEED).isEqualTo(all(from));
      assertThat(r.verified()).isTrue();
      assertThat(r.copiedEntries()).isEqualTo(all(from).size());
      assertThat(r.source()).isEqualTo(StoreCopy.checksum(from));
      assertThat(r.target().entries()).isEqualTo(r.copiedEntries());
      assertThat(r.resumedFrom()).isNull();
      assertThat(seen).isNotEmpty();
      assertThat(seen.get(seen.size() - 1).done()).isTrue();
      assertThat(seen.get(seen.size() - 1).entries()).isEqualTo(r.copiedEntries());
      assertThat(seen.stream().filter(p -> !p.done()).mapToLong(StoreCopy.Progress::entries))
          .isSorted()
          .allMatch(e -> e % 700 == 0);
    }
  }

  @Test
  void copy_listenerThrows_targetHoldsPrefixAndResumeCompletes() {
    try (Store from = filled(4000, SEED + 1);
        Store to = Stores.open("memory:")) {
      StoreCopy.Options options = StoreCopy.Options.defaults().batchEntries(500);
      assertThatThrownBy(
              () ->
                  StoreCopy.copy(
                      from,
                      to,
                      options.listener(
                          p -> {
                            if (p.entries() >= 1500) {
                              throw new IllegalStateException("interrupted");
                            }
                          })))
          .hasMessage("interrupted");
      List<Entry> source = all(from);
      List<Entry> partial = all(to);
      assertThat(partial).hasSize(1500).isEqualTo(source.subList(0, 1500));

      assertThatThrownBy(() -> StoreCopy.copy(from, to, options))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("not empty");

      List<StoreCopy.Progress> seen = new ArrayList<>();
      StoreCopy.Result r = StoreCopy.copy(from, to, options.resume(true).listener(seen::add));
      assertThat(r.verified()).isTrue();
      assertThat(r.resumedFrom()).isEqualTo(source.get(1499).key());
      assertThat(r.skippedEntries()).isEqualTo(1499);
      assertThat(r.copiedEntries()).isEqualTo(source.size() - 1499);
      assertThat(seen).allMatch(StoreCopy.Progress::resumed);
      assertThat(seen).allMatch(p -> p.skippedEntries() == 1499);
      assertThat(seen.get(seen.size() - 1).entries()).isEqualTo(source.size());
      assertThat(all(to)).isEqualTo(source);
    }
  }

  @Test
  void copy_targetWithoutAtomicBatch_putsInKeyOrder() {
    try (Store from = filled(300, SEED + 2);
        Store inner = Stores.open("memory:")) {
      List<byte[]> puts = new ArrayList<>();
      Store to = new NoBatchStore(inner, puts);
      StoreCopy.Result r = StoreCopy.copy(from, to, StoreCopy.Options.defaults().batchEntries(7));
      assertThat(r.verified()).isTrue();
      assertThat(puts).hasSize(all(from).size());
      for (int i = 1; i < puts.size(); i++) {
        assertThat(java.util.Arrays.compareUnsigned(puts.get(i - 1), puts.get(i))).isNegative();
      }
    }
  }

  @Test
  void checksum_differsWhenOneValueDiffers() {
    try (Store a = filled(100, SEED + 3);
        Store b = Stores.open("memory:")) {
      StoreCopy.copy(a, b, StoreCopy.Options.defaults());
      assertThat(StoreCopy.checksum(b)).isEqualTo(StoreCopy.checksum(a));
      byte[] key = all(a).get(50).key();
      b.put(key, "changed".getBytes(StandardCharsets.UTF_8));
      assertThat(StoreCopy.checksum(b).sha256()).isNotEqualTo(StoreCopy.checksum(a).sha256());
      assertThat(StoreCopy.checksum(b).entries()).isEqualTo(StoreCopy.checksum(a).entries());
    }
  }

  @Test
  void copy_resumeIntoTargetWithForeignKeys_isNotVerified() {
    try (Store from = filled(200, SEED + 4);
        Store to = Stores.open("memory:")) {
      to.put(new byte[] {0}, new byte[] {9, 9}); // not from the source
      StoreCopy.Result r = StoreCopy.copy(from, to, StoreCopy.Options.defaults().resume(true));
      assertThat(r.verified()).isFalse();
      assertThat(r.target().entries()).isNotEqualTo(r.source().entries());
    }
  }

  @Test
  void options_rejectBadSizes() {
    assertThatThrownBy(() -> StoreCopy.Options.defaults().batchEntries(0))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> StoreCopy.Options.defaults().batchBytes(0))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void progress_computesFractionAndEta() {
    StoreCopy.Progress p = new StoreCopy.Progress(250, 0, 1000, 1000, 1_000_000_000L, false, false);
    assertThat(p.fraction()).isEqualTo(0.25);
    assertThat(p.bytesPerSecond()).isEqualTo(1000.0);
    assertThat(p.entriesPerSecond()).isEqualTo(250.0);
    assertThat(p.etaNanos()).isEqualTo(3_000_000_000L);
    StoreCopy.Progress resumed =
        new StoreCopy.Progress(600, 500, 1000, 1000, 1_000_000_000L, true, false);
    assertThat(resumed.entriesPerSecond()).isEqualTo(100.0);
    assertThat(resumed.etaNanos()).isEqualTo(4_000_000_000L);
    assertThat(new StoreCopy.Progress(5, 0, 5, -1, 10, false, false).etaNanos()).isEqualTo(-1);
  }

  /** A memory store that pretends to lack a feature (atomic batches) and records each put. */
  private static final class NoBatchStore implements Store {
    private final Store inner;
    private final List<byte[]> puts;
    private final Feature hidden;

    NoBatchStore(Store inner, List<byte[]> puts) {
      this(inner, puts, Feature.ATOMIC_BATCH);
    }

    NoBatchStore(Store inner, List<byte[]> puts, Feature hidden) {
      this.inner = inner;
      this.puts = puts;
      this.hidden = hidden;
    }

    @Override
    public byte[] get(byte[] key) {
      return inner.get(key);
    }

    @Override
    public void put(byte[] key, byte[] value) {
      puts.add(key.clone());
      inner.put(key, value);
    }

    @Override
    public void delete(byte[] key) {
      inner.delete(key);
    }

    @Override
    public Cursor scan(KeyRange range) {
      return inner.scan(range);
    }

    @Override
    public void write(WriteBatch batch) {
      if (hidden == Feature.ATOMIC_BATCH) {
        throw new UnsupportedOperationException("no atomic batches");
      }
      inner.write(batch);
    }

    @Override
    public void sync() {
      inner.sync();
    }

    @Override
    public StoreInfo info() {
      StoreInfo i = inner.info();
      EnumSet<Feature> f = EnumSet.copyOf(i.features());
      f.remove(hidden);
      f.remove(Feature.KEYSPACES); // not delegated by this wrapper
      f.remove(Feature.KEYSPACE_BATCH);
      return new StoreInfo(i.engine(), f, i.limits(), i.durability(), i.location(), i.readOnly());
    }

    @Override
    public StoreStats stats() {
      return inner.stats();
    }

    @Override
    public void close() {
      inner.close();
    }
  }

  @Test
  void copy_sourceWithKeyspaces_copiesEveryKeyspaceAndVerifies() {
    try (Store from = filled(3000, SEED);
        Store to = Stores.open("memory:")) {
      Store users = from.keyspace("users");
      Store empty = from.keyspace("empty");
      users.put(new byte[] {1}, new byte[] {2});
      for (int i = 0; i < 500; i++) {
        users.put(("u" + i).getBytes(StandardCharsets.UTF_8), new byte[i % 7]);
      }
      from.keyspace("orders").put(new byte[] {1}, new byte[] {3});
      StoreCopy.Result r = StoreCopy.copy(from, to, StoreCopy.Options.defaults().batchEntries(97));
      assertThat(r.verified()).isTrue();
      assertThat(r.copiedEntries()).isEqualTo(all(from).size() + 501 + 1);
      assertThat(to.keyspaces()).containsExactly("empty", "orders", "users");
      assertThat(all(to.keyspace("users"))).isEqualTo(all(users));
      assertThat(all(to.keyspace("empty"))).isEqualTo(all(empty)).isEmpty();
      assertThat(all(to)).isEqualTo(all(from));
    }
  }

  @Test
  void checksum_sameKeysInAnotherKeyspace_differs() {
    try (Store a = Stores.open("memory:");
        Store b = Stores.open("memory:")) {
      a.keyspace("x").put(new byte[] {1}, new byte[] {1});
      b.keyspace("y").put(new byte[] {1}, new byte[] {1});
      assertThat(StoreCopy.checksum(a).entries()).isEqualTo(StoreCopy.checksum(b).entries());
      assertThat(StoreCopy.checksum(a).sha256()).isNotEqualTo(StoreCopy.checksum(b).sha256());
      Store c = Stores.open("memory:");
      c.put(new byte[] {1}, new byte[] {1});
      assertThat(StoreCopy.checksum(c).sha256())
          .as("a key in a keyspace is not the same as the key in the store's own keys")
          .isNotEqualTo(StoreCopy.checksum(a).sha256());
      c.close();
    }
  }

  @Test
  void copy_keyspacesIntoEngineWithout_refusedBeforeCopyingAnything() {
    try (Store from = filled(100, SEED);
        Store mem = Stores.open("memory:")) {
      from.keyspace("users").put(new byte[] {1}, new byte[] {2});
      Store to = new NoBatchStore(mem, new ArrayList<>(), Feature.KEYSPACES);
      assertThatThrownBy(() -> StoreCopy.copy(from, to, StoreCopy.Options.defaults()))
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("[users]")
          .hasMessageContaining("KEYSPACES");
      assertThat(all(mem)).as("nothing copied").isEmpty();
    }
  }

  @Test
  void copy_targetKeyspaceNotEmpty_refusedWithoutResume() {
    try (Store from = filled(100, SEED);
        Store to = Stores.open("memory:")) {
      from.keyspace("users").put(new byte[] {1}, new byte[] {2});
      to.keyspace("users").put(new byte[] {9}, new byte[] {9});
      assertThatThrownBy(() -> StoreCopy.copy(from, to, StoreCopy.Options.defaults()))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("not empty (keys in [users])");
      assertThat(all(to)).as("nothing copied").isEmpty();
    }
  }
}
