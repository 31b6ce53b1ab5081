package io.kv4j.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Cursor;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.Snapshot;
import io.kv4j.Store;
import io.kv4j.StoreCorruptedException;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Values larger than one etcd request, on the cluster of .ci/etcd.sh. The stores here run with
 * max-request-bytes=262144, so values over 98,304 bytes are chunked (chunks of that size) and small
 * tests exercise the same paths as 16 MiB values on the default cluster limits.
 */
@Timeout(240)
class EtcdChunkTest {
  /** Over the inline limit of a 256 KiB request: (262144 - 65536) / 2. */
  private static final int INLINE_MAX = 98_304;

  @TempDir Path dir;

  private final List<String> prefixes = new ArrayList<>();

  @BeforeAll
  static void cluster() {
    TestEtcd.require();
  }

  @AfterEach
  void drop() {
    for (String p : prefixes) {
      TestEtcd.drop(p);
    }
  }

  private Store open(Path path) {
    prefixes.add(TestEtcd.prefixFor(path));
    return Stores.open(TestEtcd.builder().option("max-request-bytes", "262144").path(path).build());
  }

  private long chunkKeys(Path path) {
    return TestEtcd.count(TestEtcd.prefixFor(path) + "c/");
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** A value that names its seed in its first 8 bytes, so any read can be checked whole. */
  private static byte[] value(long seed, int length) {
    byte[] v = new byte[length];
    new SplittableRandom(seed).nextBytes(v);
    ByteBuffer.wrap(v).putLong(seed);
    return v;
  }

  private static void assertWhole(byte[] read, int length, String what) {
    assertThat(read).as(what).isNotNull().hasSize(length);
    long seed = ByteBuffer.wrap(read).getLong();
    assertThat(Arrays.equals(read, value(seed, length)))
        .as("%s: the value written with seed %d, whole (not a mix of two writes)", what, seed)
        .isTrue();
  }

  private static void dieBetweenChunksAndManifest(Store s) {
    ((EtcdStore) s).writes.afterChunks =
        () -> {
          throw new IllegalStateException("injected: the writer dies after its chunks");
        };
  }

  private static void liveAgain(Store s) {
    ((EtcdStore) s).writes.afterChunks = () -> {};
  }

  @Test
  void bigValue_isStoredInChunks_andOverwritingOrDeletingItDeletesThem() {
    Path path = dir.resolve("big");
    try (Store s = open(path)) {
      byte[] big = value(1, 1 << 20); // 11 chunks
      s.put(b("k"), big);
      assertThat(s.get(b("k"))).isEqualTo(big);
      assertThat(chunkKeys(path)).isEqualTo(11);
      byte[] other = value(2, 300_000); // 4 chunks
      s.put(b("k"), other);
      assertThat(s.get(b("k"))).isEqualTo(other);
      assertThat(chunkKeys(path)).as("the first value's chunks went with it").isEqualTo(4);
      s.put(b("k"), b("small"));
      assertThat(s.get(b("k"))).isEqualTo(b("small"));
      assertThat(chunkKeys(path)).isZero();
      s.put(b("k"), big);
      s.delete(b("k"));
      assertThat(s.get(b("k"))).isNull();
      assertThat(chunkKeys(path)).isZero();
      s.put(b("edge"), value(3, INLINE_MAX));
      assertThat(chunkKeys(path)).as("a value of exactly the inline limit is inline").isZero();
      s.put(b("edge"), value(4, INLINE_MAX + 1));
      assertThat(chunkKeys(path)).isEqualTo(2);
      assertWhole(s.get(b("edge")), INLINE_MAX + 1, "a value one byte over the inline limit");
    }
    try (Store s = open(path)) {
      assertWhole(s.get(b("edge")), INLINE_MAX + 1, "after reopening");
    }
  }

  @Test
  void tornWrite_leavesTheOldValueReadable_andCompactCollectsTheOrphanChunks() {
    Path path = dir.resolve("torn");
    try (Store s = open(path)) {
      byte[] old = value(10, 500_000); // 6 chunks
      s.put(b("k"), old);
      Store ks = s.keyspace("space");
      ks.put(b("k"), b("inline"));
      dieBetweenChunksAndManifest(s);
      assertThatThrownBy(() -> s.put(b("k"), value(11, 400_000))) // 5 chunks, never published
          .hasMessageContaining("injected");
      assertThatThrownBy(() -> ks.put(b("k"), value(12, 200_000))) // 3 chunks
          .hasMessageContaining("injected");
      WriteBatch batch =
          new WriteBatch().put(b("a"), value(13, 150_000)).put(b("b"), b("x")); // 2 chunks
      assertThatThrownBy(() -> s.write(batch)).hasMessageContaining("injected");
      liveAgain(s);

      assertThat(s.get(b("k"))).as("the old value").isEqualTo(old);
      assertThat(ks.get(b("k"))).isEqualTo(b("inline"));
      assertThat(s.get(b("a"))).as("nothing of the torn batch").isNull();
      assertThat(s.get(b("b"))).isNull();
      assertThat(s.stats().keyCount()).isEqualTo(1);
      assertThat(keys(s.scan(KeyRange.all()))).containsExactly("k");
      assertThat(chunkKeys(path)).as("live and orphan chunks").isEqualTo(6 + 5 + 3 + 2);

      s.compact();
      assertThat(chunkKeys(path)).as("only the live value's chunks").isEqualTo(6);
      assertThat(s.stats().figures().get("chunks.collected")).isEqualTo(5L + 3 + 2);
      assertThat(s.get(b("k"))).isEqualTo(old);
      assertThat(ks.get(b("k"))).isEqualTo(b("inline"));
      s.put(b("k"), value(14, 400_000));
      assertWhole(s.get(b("k")), 400_000, "a write after the torn one");
      assertThat(chunkKeys(path)).isEqualTo(5);
    }
  }

  @Test
  void chunksOfADeadClient_areNeverRead_andCompactCollectsThem() throws Exception {
    Path path = dir.resolve("dead");
    String prefix = TestEtcd.prefixFor(path);
    try (Store s = open(path)) {
      s.put(b("live"), value(20, 200_000));
      s.put(b("inline"), b("v"));
    }
    // What a client killed between its chunk txns and its manifest txn leaves: chunks of a fresh
    // id for a key that has an inline value, and for a key that has none.
    for (String key : List.of("inline", "absent")) {
      byte[] area = ValueCodec.chunkArea(b(prefix), null);
      byte[] id = new byte[ValueCodec.ID_BYTES];
      new SplittableRandom(key.hashCode()).nextBytes(id);
      byte[] idPrefix = ValueCodec.idPrefix(ValueCodec.chunkPrefix(area, b(key)), id);
      for (int i = 0; i < 2; i++) {
        TestEtcd.post(
            "/v3/kv/put",
            "{\"key\":\""
                + Base64.getEncoder().encodeToString(ValueCodec.chunkKey(idPrefix, i))
                + "\",\"value\":\""
                + Base64.getEncoder().encodeToString(new byte[1000])
                + "\"}");
      }
    }
    try (Store s = open(path)) {
      assertThat(chunkKeys(path)).isEqualTo(3 + 4);
      assertThat(s.get(b("inline"))).isEqualTo(b("v"));
      assertThat(s.get(b("absent"))).isNull();
      assertThat(s.stats().keyCount()).isEqualTo(2);
      assertThat(keys(s.scan(KeyRange.all()))).containsExactly("inline", "live");
      s.compact();
      assertThat(chunkKeys(path)).isEqualTo(3);
      assertWhole(s.get(b("live")), 200_000, "the live value after compact");
    }
  }

  @Test
  void compactDuringAWrite_leavesTheWritesChunksAlone() {
    Path path = dir.resolve("in-flight");
    try (Store s = open(path)) {
      ((EtcdStore) s).writes.afterChunks = s::compact;
      byte[] v = value(30, 300_000);
      s.put(b("k"), v);
      liveAgain(s);
      assertThat(s.get(b("k"))).isEqualTo(v);
      assertThat(chunkKeys(path)).isEqualTo(4);
    }
  }

  @Test
  void concurrentOverwritesOfABigValue_neverShowAReaderAMix() throws Exception {
    Path path = dir.resolve("race");
    int length = 350_000; // 4 chunks
    long base = 0x5eedL << 20;
    try (Store s = open(path)) {
      s.put(b("k"), value(base, length));
      AtomicBoolean writing = new AtomicBoolean(true);
      AtomicReference<Throwable> failure = new AtomicReference<>();
      AtomicInteger reads = new AtomicInteger();
      // Each writer's last put waits for a read done after the writers began: the reader has
      // certainly overlapped the overwrites, however the threads are scheduled.
      AtomicBoolean began = new AtomicBoolean();
      CountDownLatch readAmidWrites = new CountDownLatch(1);
      List<Thread> threads = new ArrayList<>();
      for (int w = 0; w < 2; w++) {
        long first = base + 1 + w * 1000L;
        threads.add(
            new Thread(
                () -> {
                  try {
                    began.set(true);
                    for (int i = 0; i < 12; i++) {
                      if (i == 11 && !readAmidWrites.await(60, TimeUnit.SECONDS)) {
                        throw new AssertionError("no read done in 60 s while the writers ran");
                      }
                      s.put(b("k"), value(first + i, length));
                    }
                  } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                  }
                }));
      }
      Thread reader =
          new Thread(
              () -> {
                try {
                  while (writing.get() && failure.get() == null) {
                    assertWhole(s.get(b("k")), length, "get");
                    try (Cursor c = s.scan(KeyRange.all().reverse())) {
                      assertWhole(c.next().value(), length, "reverse scan");
                    }
                    try (Snapshot snap = s.snapshot()) {
                      assertWhole(snap.get(b("k")), length, "snapshot get");
                    }
                    reads.incrementAndGet();
                    if (began.get()) {
                      readAmidWrites.countDown();
                    }
                  }
                } catch (Throwable t) {
                  failure.compareAndSet(null, t);
                }
              });
      threads.forEach(Thread::start);
      reader.start();
      for (Thread t : threads) {
        t.join(180_000);
      }
      writing.set(false);
      reader.join(60_000);
      if (failure.get() != null) {
        throw new AssertionError("seeds from " + base + ": " + failure.get(), failure.get());
      }
      assertThat(reads.get()).as("reads done while the writers ran").isPositive();
      byte[] last = s.get(b("k"));
      assertWhole(last, length, "the last value");
      assertThat(chunkKeys(path)).as("only the last value's chunks are left").isEqualTo(4);
    }
  }

  @Test
  void scans_skipChunkKeys_forwardAndReverse() {
    Path path = dir.resolve("scan");
    try (Store s = open(path)) {
      Store ks = s.keyspace("ks");
      List<String> names = new ArrayList<>();
      for (int i = 0; i < 12; i++) {
        String k = String.format("k%02d", i);
        names.add(k);
        s.put(b(k), i % 3 == 0 ? value(40 + i, 120_000 + i) : b("v" + i));
        ks.put(b(k), i % 4 == 0 ? value(60 + i, 110_000) : b("w" + i));
      }
      assertThat(keys(s.scan(KeyRange.all()))).containsExactlyElementsOf(names);
      List<String> reversed = new ArrayList<>(names);
      java.util.Collections.reverse(reversed);
      assertThat(keys(s.scan(KeyRange.all().reverse()))).containsExactlyElementsOf(reversed);
      assertThat(keys(ks.scan(KeyRange.all().reverse()))).containsExactlyElementsOf(reversed);
      assertThat(keys(s.scan(KeyRange.all().gte(b("k03")).lte(b("k06")))))
          .containsExactly("k03", "k04", "k05", "k06");
      assertThat(s.stats().keyCount()).isEqualTo(12);
      assertThat(ks.stats().keyCount()).isEqualTo(12);
      try (Cursor c = s.scan(KeyRange.all())) {
        for (int i = 0; c.hasNext(); i++) {
          Entry e = c.next();
          if (i % 3 == 0) {
            assertWhole(e.value(), 120_000 + i, "scanned chunked value " + i);
          } else {
            assertThat(e.value()).isEqualTo(b("v" + i));
          }
        }
      }
      List<byte[]> all = s.getAll(List.of(b("k00"), b("k01"), b("nope"), b("k09")));
      assertWhole(all.get(0), 120_000, "getAll k00");
      assertThat(all.get(1)).isEqualTo(b("v1"));
      assertThat(all.get(2)).isNull();
      assertWhole(all.get(3), 120_009, "getAll k09");
      assertThat(s.dropKeyspace("ks")).isTrue();
      assertThat(TestEtcd.count(TestEtcd.prefixFor(path) + "c/k/")).as("dropped chunks").isZero();
    }
  }

  @Test
  void conditionalWrites_compareChunkedValuesWhole() {
    Path path = dir.resolve("cas");
    try (Store s = open(path)) {
      byte[] v1 = value(50, 250_000);
      byte[] v2 = value(51, 250_000);
      assertThat(s.putIfAbsent(b("k"), v1)).isTrue();
      assertThat(s.putIfAbsent(b("k"), v2)).isFalse();
      assertThat(chunkKeys(path)).as("the refused write's chunks are discarded").isEqualTo(3);
      byte[] almost = v1.clone();
      almost[almost.length - 1]++;
      assertThat(s.replace(b("k"), almost, v2)).as("expected differs in its last byte").isFalse();
      assertThat(s.replace(b("k"), b("small"), v2)).isFalse();
      assertThat(s.get(b("k"))).isEqualTo(v1);
      assertThat(s.replace(b("k"), v1, v2)).isTrue();
      assertThat(s.get(b("k"))).isEqualTo(v2);
      assertThat(s.replace(b("k"), v2, b("small"))).isTrue();
      assertThat(s.replace(b("k"), b("small"), v1)).isTrue();
      assertThat(s.delete(b("k"), v2)).isFalse();
      assertThat(s.delete(b("k"), v1)).isTrue();
      assertThat(s.get(b("k"))).isNull();
      assertThat(chunkKeys(path)).isZero();
      // Chunked although short (a batch too large for one request chunks its largest values): a
      // short expected value, compared by etcd as an inline value, still matches it.
      WriteBatch w = new WriteBatch();
      for (int i = 0; i < 4; i++) {
        w.put(b("m" + i), value(70 + i, 80_000));
      }
      s.write(w);
      assertThat(chunkKeys(path)).as("some of the batch's values chunked").isPositive();
      for (int i = 0; i < 4; i++) {
        assertThat(s.replace(b("m" + i), value(70 + i, 80_000), b("r" + i))).isTrue();
        assertThat(s.get(b("m" + i))).isEqualTo(b("r" + i));
      }
      assertThat(chunkKeys(path)).isZero();
    }
  }

  @Test
  void writeIf_comparesAndWritesChunkedValuesInOneStep() {
    Path path = dir.resolve("write-if");
    try (Store s = open(path)) {
      byte[] a = value(90, 300_000);
      byte[] b = value(91, 200_000);
      s.put(b("a"), a);
      s.put(b("b"), b("small"));
      WriteBatch fails =
          new WriteBatch()
              .expect(b("a"), a)
              .expect(b("b"), b("other"))
              .put(b("b"), value(92, 400_000))
              .delete(b("a"));
      assertThat(s.writeIf(fails)).as("the second condition does not hold").isFalse();
      assertThat(s.get(b("a"))).isEqualTo(a);
      assertThat(s.get(b("b"))).isEqualTo(b("small"));
      assertThat(chunkKeys(path)).as("nothing of the refused batch").isEqualTo(4);
      WriteBatch holds =
          new WriteBatch()
              .expect(b("a"), a)
              .expect(b("b"), b("small"))
              .expectAbsent("never-made", b("a"))
              .put(b("b"), b)
              .put(b("a"), b("gone"));
      assertThat(s.writeIf(holds)).isTrue();
      assertThat(s.get(b("a"))).isEqualTo(b("gone"));
      assertThat(s.get(b("b"))).isEqualTo(b);
      assertThat(chunkKeys(path)).as("b's chunks only").isEqualTo(3);
      assertThat(s.keyspaces()).as("a condition creates no keyspace").isEmpty();
      assertThat(s.writeIf(new WriteBatch().expect(b("b"), value(91, 200_000)))).isTrue();
      byte[] almost = b.clone();
      almost[100_000] ^= 1;
      assertThat(s.writeIf(new WriteBatch().expect(b("b"), almost).delete(b("b")))).isFalse();
      assertThat(s.get(b("b"))).isEqualTo(b);
    }
  }

  @Test
  void batchOverTheRequestLimit_isChunked_andAtomic() {
    Path path = dir.resolve("batch");
    try (Store s = open(path)) {
      s.put(b("keep"), b("old"));
      WriteBatch w = new WriteBatch().delete(b("keep"));
      for (int i = 0; i < 16; i++) { // 16 x 60,000 bytes: almost four times the request limit
        w.put(b("b" + i), value(80 + i, 60_000));
      }
      s.write(w);
      assertThat(s.get(b("keep"))).isNull();
      for (int i = 0; i < 16; i++) {
        assertWhole(s.get(b("b" + i)), 60_000, "batch value " + i);
      }
      assertThat(s.stats().keyCount()).isEqualTo(16);
    }
  }

  @Test
  void storeOfTheFormerFormat_isRefusedNamingIt() throws Exception {
    Path path = dir.resolve("format1");
    String prefix = TestEtcd.prefixFor(path);
    prefixes.add(prefix);
    TestEtcd.post(
        "/v3/kv/put",
        "{\"key\":\""
            + TestEtcd.b64(prefix + "m/meta")
            + "\",\"value\":\""
            + TestEtcd.b64("kv4j-etcd 1")
            + "\"}");
    assertThatThrownBy(() -> open(path))
        .isInstanceOf(StoreCorruptedException.class)
        .hasMessageContaining("kv4j-etcd 1")
        .hasMessageContaining(ValueCodec.FORMAT);
  }

  private static List<String> keys(Cursor c) {
    List<String> out = new ArrayList<>();
    try (c) {
      while (c.hasNext()) {
        out.add(new String(c.next().key(), StandardCharsets.UTF_8));
      }
    }
    return out;
  }
}
