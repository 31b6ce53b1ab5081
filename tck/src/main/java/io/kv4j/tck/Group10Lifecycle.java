package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreConfig;
import io.kv4j.StoreException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreLockedException;
import io.kv4j.StoreStats;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import io.kv4j.spi.DirectoryLock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Group 10: lifecycle, locking, info and damaged locations. */
final class Group10Lifecycle extends RuleGroup {
  /**
   * Group 10's rules as JUnit tests, in rule order, each run in a new {@code Group10Lifecycle};
   * {@link StoreTck} implements it. A rule is added here and in SPEC.md.
   */
  interface Tests {
    @Test
    default void required_r10_1_closeIsIdempotent() {
      new Group10Lifecycle(this).required_r10_1_closeIsIdempotent();
    }

    @Test
    default void required_r10_2_useAfterCloseIsStoreClosedException() {
      new Group10Lifecycle(this).required_r10_2_useAfterCloseIsStoreClosedException();
    }

    @Test
    default void required_r10_3_secondOpenIsLocked() {
      new Group10Lifecycle(this).required_r10_3_secondOpenIsLocked();
    }

    @Test
    default void required_r10_4_lockReleasedOnClose() {
      new Group10Lifecycle(this).required_r10_4_lockReleasedOnClose();
    }

    @Test
    default void required_r10_5_readOnlyRefusesWrites() {
      new Group10Lifecycle(this).required_r10_5_readOnlyRefusesWrites();
    }

    @Test
    default void required_r10_6_missingLocationWithoutCreate() {
      new Group10Lifecycle(this).required_r10_6_missingLocationWithoutCreate();
    }

    @Test
    default void required_r10_7_corruptLocationIsReported() throws IOException {
      new Group10Lifecycle(this).required_r10_7_corruptLocationIsReported();
    }

    @Test
    default void required_r10_8_infoDescribesTheStore() {
      new Group10Lifecycle(this).required_r10_8_infoDescribesTheStore();
    }

    @Test
    default void required_r10_9_statsCountKeys() {
      new Group10Lifecycle(this).required_r10_9_statsCountKeys();
    }

    @Test
    default void required_r10_10_compactKeepsEveryEntry() {
      new Group10Lifecycle(this).required_r10_10_compactKeepsEveryEntry();
    }

    @Test
    default void required_r10_11_secondProcessIsLocked() throws Exception {
      new Group10Lifecycle(this).required_r10_11_secondProcessIsLocked();
    }

    @Test
    default void required_r10_12_compactDuringWritesLosesNothing() throws Exception {
      new Group10Lifecycle(this).required_r10_12_compactDuringWritesLosesNothing();
    }
  }

  /** Only {@link StoreTck}, a {@link TckBase}, implements {@link Tests}. */
  private Group10Lifecycle(Tests test) {
    super((TckBase) test);
  }

  /**
   * For a kit of chosen rules in this package (a subset a slow engine runs beside the whole kit).
   */
  Group10Lifecycle(TckBase kit) {
    super(kit);
  }

  void required_r10_1_closeIsIdempotent() {
    Store s = open();
    s.put(b("a"), b("1"));
    s.close();
    s.close();
    close(s);
  }

  void required_r10_2_useAfterCloseIsStoreClosedException() {
    Store s = open();
    s.put(b("a"), b("1"));
    close(s);
    List<Runnable> calls =
        List.of(
            () -> s.get(b("a")),
            () -> s.put(b("a"), b("2")),
            () -> s.delete(b("a")),
            () -> s.scan(KeyRange.all()),
            () -> s.write(new WriteBatch().put(b("a"), b("3"))),
            s::sync,
            s::stats,
            s::compact);
    for (Runnable call : calls) {
      assertThat(thrown(call::run))
          .as(
              rule(
                  "10.2",
                  "every operation on a closed store throws StoreClosedException, never crashes"))
          .isInstanceOfAny(StoreClosedException.class, UnsupportedOperationException.class);
    }
    assertThat(s.info().engine())
        .as(rule("10.2", "info() stays readable after close"))
        .isEqualTo(engine());
  }

  void required_r10_3_secondOpenIsLocked() {
    require("10.3", Feature.PERSISTENT);
    Store s = open();
    s.put(b("a"), b("1"));
    StoreConfig again = config(Durability.BUFFERED);
    assertThat(thrown(() -> Stores.open(again).close()))
        .as(
            rule(
                "10.3",
                "a second open of the same location fails with StoreLockedException naming it"))
        .isInstanceOf(StoreLockedException.class)
        .hasMessageContaining(dir().getFileName().toString());
    assertThat(s.get(b("a")))
        .as(rule("10.3", "the failed open disturbed nothing"))
        .isEqualTo(b("1"));
  }

  void required_r10_11_secondProcessIsLocked() throws Exception {
    require("10.11", Feature.PERSISTENT);
    org.junit.jupiter.api.Assumptions.assumeTrue(
        dataLivesInLocationFiles(),
        "[10.11] skipped: engine '"
            + engine()
            + "' keeps its data on a server, not in a directory");
    Store s = open();
    s.put(b("a"), b("1"));
    try (ChildProcess c = child(LockProbe.class, configOf(s).toUri())) {
      c.process().getOutputStream().close();
      boolean ended = c.process().waitFor(120, java.util.concurrent.TimeUnit.SECONDS);
      if (!ended) {
        c.kill();
      }
      await("10.11", c, java.time.Duration.ofSeconds(30)); // its streams, read to the end
      String out = c.stdout().trim();
      assertThat(ended)
          .as(
              rule(
                  "10.11",
                  "the child JVM opening the same location ended within 120 s; " + c.describe()))
          .isTrue();
      assertThat(out)
          .as(
              rule(
                  "10.11",
                  "an open of the same location from another process (a child JVM) while this one"
                      + " holds it must fail with StoreLockedException naming the location (a lock"
                      + " that guards only its own JVM lets two processes write one store); child"
                      + " printed '"
                      + out
                      + "'; "
                      + c.describe()))
          .startsWith("locked ")
          .contains(dir().getFileName().toString());
    }
    assertThat(s.get(b("a")))
        .as(rule("10.11", "the other process's failed open disturbed nothing"))
        .isEqualTo(b("1"));
  }

  /**
   * Rule 10.12: compactions run while writers put and delete their own keys MUST lose nothing;
   * after a reopen every key holds its last write (see {@link CompactionRace}).
   */
  void required_r10_12_compactDuringWritesLosesNothing() throws Exception {
    require("10.12", Feature.PERSISTENT);
    Store s = open();
    int writers = Math.max(1, env().stressThreads() - 1);
    int rounds = Math.max(3, env().stressOps() / 500);
    int cap = Math.max(1000, env().stressOps() * 20); // writes per writer, at most
    CompactionRace race = new CompactionRace(s, writers, rounds, cap);
    List<Throwable> errors = runThreads("10.12", writers + 1, race::run);
    assertThat(errors).as(rule("10.12", "no thread failed")).isEmpty();
    race.checkEveryWrite(reopen(s));
  }

  void required_r10_4_lockReleasedOnClose() {
    require("10.4", Feature.PERSISTENT);
    Store s = open();
    s.put(b("a"), b("1"));
    close(s);
    Store again = open();
    assertThat(again.get(b("a")))
        .as(rule("10.4", "after close the location opens again"))
        .isEqualTo(b("1"));
  }

  void required_r10_5_readOnlyRefusesWrites() {
    require("10.5", Feature.PERSISTENT);
    Store s = open();
    s.put(b("a"), b("1"));
    close(s);
    Store ro = open(config(Durability.BUFFERED).toBuilder().readOnly(true).build());
    assertThat(ro.info().readOnly()).as(rule("10.5", "info says read-only")).isTrue();
    assertThat(ro.get(b("a"))).as(rule("10.5", "a read-only store reads")).isEqualTo(b("1"));
    assertThat(thrown(() -> ro.put(b("b"), b("2"))))
        .as(rule("10.5", "a read-only store refuses put with UnsupportedOperationException"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThat(thrown(() -> ro.delete(b("a"))))
        .as(rule("10.5", "a read-only store refuses delete with UnsupportedOperationException"))
        .isInstanceOf(UnsupportedOperationException.class);
    close(ro);
    Store rw = open();
    assertThat(rw.get(b("a"))).as(rule("10.5", "nothing changed")).isEqualTo(b("1"));
    assertThat(rw.get(b("b")))
        .as(rule("10.5", "the put the read-only store refused stored nothing"))
        .isNull();
  }

  void required_r10_6_missingLocationWithoutCreate() {
    require("10.6", Feature.PERSISTENT);
    Path missing = tempDir.resolve("does-not-exist");
    StoreConfig c = config(missing, Durability.BUFFERED).toBuilder().createIfMissing(false).build();
    assertThat(thrown(() -> Stores.open(c).close()))
        .as(rule("10.6", "create-if-missing=false on a missing location is a StoreException"))
        .isInstanceOf(StoreException.class);
    assertThat(missing).as(rule("10.6", "and creates nothing")).doesNotExist();
  }

  void required_r10_7_corruptLocationIsReported() throws IOException {
    require("10.7", Feature.PERSISTENT);
    org.junit.jupiter.api.Assumptions.assumeTrue(
        dataLivesInLocationFiles(),
        "[10.7] skipped: engine '"
            + engine()
            + "' keeps its data on a server, not in files under the location");
    Store s = open();
    for (int i = 0; i < 100; i++) {
      s.put(key(i), b("value " + i));
    }
    close(s);
    SplittableRandom rnd = new SplittableRandom(107);
    try (Stream<Path> files = Files.walk(dir())) {
      for (Path f : files.filter(Files::isRegularFile).toList()) {
        if (f.getFileName().toString().equals(DirectoryLock.FILE_NAME)) {
          continue;
        }
        Files.write(f, value(rnd, (int) Math.max(4096, Files.size(f))));
      }
    }
    Store damaged;
    try {
      damaged = open();
    } catch (StoreException e) {
      return; // reported at open: good
    }
    int reported = 0;
    for (int i = 0; i < 100; i++) {
      try {
        byte[] v = damaged.get(key(i));
        assertThat(v == null || java.util.Arrays.equals(v, b("value " + i)))
            .as(rule("10.7", "a damaged store never returns garbage as a value"))
            .isTrue();
      } catch (StoreException e) {
        reported++;
      }
    }
    assertThat(reported)
        .as(
            rule(
                "10.7",
                "every file overwritten with garbage: opening or reading must report StoreException (corrupt), not act as an empty store"))
        .isPositive();
  }

  void required_r10_8_infoDescribesTheStore() {
    Store s = open(Durability.SYNC);
    StoreInfo info = s.info();
    assertThat(info.engine())
        .as(rule("10.8", "info names the provider's id"))
        .isEqualTo(provider().id());
    assertThat(info.features())
        .as(rule("10.8", "info declares the provider's features"))
        .isEqualTo(provider().features());
    assertThat(info.durability())
        .as(rule("10.8", "info reports the configured durability"))
        .isEqualTo(Durability.SYNC);
    assertThat(info.readOnly())
        .as(rule("10.8", "info of a store opened read-write says not read-only"))
        .isFalse();
    assertThat(info.location()).as(rule("10.8", "info names a location")).isNotBlank();
  }

  void required_r10_9_statsCountKeys() {
    Store s = open();
    for (int i = 0; i < 300; i++) {
      s.put(key(i), b("v"));
    }
    for (int i = 0; i < 100; i++) {
      s.delete(key(i));
    }
    var st = s.stats();
    if (st.keyCountExact()) {
      assertThat(st.keyCount())
          .as(rule("10.9", "an exact key count counts live keys"))
          .isEqualTo(200);
    } else {
      assertThat(st.keyCount())
          .as(rule("10.9", "an estimated key count is non-negative"))
          .isNotNegative();
    }
    assertThat(st.diskBytes()).as(rule("10.9", "disk bytes are non-negative")).isNotNegative();
    if (has(Feature.PERSISTENT)) {
      s.sync();
      assertThat(s.stats().diskBytes())
          .as(rule("10.9", "a persistent store with data occupies disk"))
          .isPositive();
    }
  }

  void required_r10_10_compactKeepsEveryEntry() {
    Store s = open();
    TreeMap<byte[], byte[]> model = newModel();
    SplittableRandom rnd = new SplittableRandom(1010);
    // Three rounds of overwrites and deletes leave the engine garbage to reclaim.
    for (int round = 0; round < 3; round++) {
      for (int i = 0; i < 1000; i++) {
        byte[] v = value(rnd, rnd.nextInt(200));
        s.put(key(i), v);
        model.put(key(i), v);
      }
      for (int i = round; i < 1000; i += 3) {
        s.delete(key(i));
        model.remove(key(i));
      }
    }
    byte[] longest = new byte[s.info().limits().maxKeySize()];
    Arrays.fill(longest, (byte) 0xff);
    for (byte[][] kv : new byte[][][] {{b("empty"), new byte[0]}, {longest, b("longest")}}) {
      s.put(kv[0], kv[1]);
      model.put(kv[0], kv[1]);
    }
    List<Entry> seen = new ArrayList<>();
    Cursor open = null;
    if (has(Feature.ORDERED_SCAN)) {
      open = s.scan(KeyRange.all());
      for (int i = 0; i < 10 && open.hasNext(); i++) {
        seen.add(open.next());
      }
    }
    assertThat(thrown(s::compact))
        .as(rule("10.10", "compact() returns normally, also with a cursor open"))
        .isNull();
    assertThat(thrown(s::compact))
        .as(rule("10.10", "compact() right after compact() returns normally"))
        .isNull();
    if (open != null) {
      open.forEachRemaining(seen::add);
      open.close();
      List<Entry> want = expected(model, KeyRange.all());
      assertThat(keysOf(seen))
          .as(rule("10.10", "a cursor opened before compact() yields every key, in order"))
          .containsExactlyElementsOf(keysOf(want));
      assertThat(seen)
          .as(rule("10.10", "a cursor opened before compact() yields every value"))
          .isEqualTo(want);
    }
    assertKeptByCompact("after compact()", s, model);
    s.put(key(5000), b("after"));
    s.delete(key(0));
    model.put(key(5000), b("after"));
    model.remove(key(0));
    assertKeptByCompact("after writes that follow compact()", s, model);
    if (has(Feature.PERSISTENT)) {
      s = reopen(s);
      assertKeptByCompact("after compact() and reopen", s, model);
    }
    close(s);
    assertThat(thrown(s::compact))
        .as(rule("10.10", "compact() on a closed store throws StoreClosedException"))
        .isInstanceOf(StoreClosedException.class);
    if (has(Feature.PERSISTENT)) {
      Store ro = open(config(Durability.BUFFERED).toBuilder().readOnly(true).build());
      assertThat(thrown(ro::compact))
          .as(
              rule(
                  "10.10",
                  "compact() on a read-only store throws UnsupportedOperationException, like every"
                      + " write"))
          .isInstanceOf(UnsupportedOperationException.class);
      close(ro);
      assertKeptByCompact("after a refused read-only compact()", open(), model);
    }
  }

  /** Every model entry is readable, deleted keys stay absent, scans and counts match the model. */
  private void assertKeptByCompact(String when, Store s, TreeMap<byte[], byte[]> model) {
    for (int i = 0; i < 1000; i++) {
      assertThat(s.get(key(i)))
          .as(
              rule(
                  "10.10",
                  "key " + i + " " + when + " (stored and deleted keys are kept as they were)"))
          .isEqualTo(model.get(key(i)));
    }
    for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
      assertThat(s.get(e.getKey()))
          .as(rule("10.10", "get " + hex(e.getKey()) + " " + when))
          .isEqualTo(e.getValue());
    }
    if (has(Feature.ORDERED_SCAN)) {
      assertScan("10.10", s, model, KeyRange.all());
    }
    if (has(Feature.REVERSE_SCAN)) {
      assertScan("10.10", s, model, KeyRange.all().reverse());
    }
    StoreStats st = s.stats();
    if (st.keyCountExact()) {
      assertThat(st.keyCount())
          .as(rule("10.10", "the exact key count " + when))
          .isEqualTo(model.size());
    }
  }
}
