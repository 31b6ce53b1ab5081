package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Snapshot;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.WriteBatch;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Group 17: keyspaces — named, independent sets of keys in one store location ({@link
 * Feature#KEYSPACES}), and batches that span them atomically ({@link Feature#KEYSPACE_BATCH}).
 */
final class Group17Keyspaces extends RuleGroup {
  /**
   * Group 17's rules as JUnit tests, in rule order, each run in a new {@code Group17Keyspaces};
   * {@link StoreTck} implements it. A rule is added here and in SPEC.md.
   */
  interface Tests {
    @Test
    default void required_r17_1_keyspacesAreIndependent() {
      new Group17Keyspaces(this).required_r17_1_keyspacesAreIndependent();
    }

    @Test
    default void required_r17_2_keyspacesSurviveReopen() {
      new Group17Keyspaces(this).required_r17_2_keyspacesSurviveReopen();
    }

    @Test
    default void required_r17_3_dropRemovesAKeyspaceAndClosesItsHandles() {
      new Group17Keyspaces(this).required_r17_3_dropRemovesAKeyspaceAndClosesItsHandles();
    }

    @Test
    default void required_r17_4_namesAreChecked() {
      new Group17Keyspaces(this).required_r17_4_namesAreChecked();
    }

    @Test
    default void required_r17_5_handlesCloseWithTheirStore() {
      new Group17Keyspaces(this).required_r17_5_handlesCloseWithTheirStore();
    }

    @Test
    default void required_r17_6_batchesSpanKeyspacesAtomically() {
      new Group17Keyspaces(this).required_r17_6_batchesSpanKeyspacesAtomically();
    }

    @Test
    default void required_r17_7_keyspaceCallsWithoutTheFeatureAreRefused() {
      new Group17Keyspaces(this).required_r17_7_keyspaceCallsWithoutTheFeatureAreRefused();
    }

    @Test
    default void required_r17_8_aKeyspaceHandleKeepsTheStoreContract() throws Exception {
      new Group17Keyspaces(this).required_r17_8_aKeyspaceHandleKeepsTheStoreContract();
    }

    @Test
    default void required_r17_9_backupHoldsEveryKeyspace() {
      new Group17Keyspaces(this).required_r17_9_backupHoldsEveryKeyspace();
    }

    @Test
    default void required_r17_10_readOnlyOpensExistingKeyspacesOnly() {
      new Group17Keyspaces(this).required_r17_10_readOnlyOpensExistingKeyspacesOnly();
    }

    @Test
    default void required_r17_11_namesAreExactAndCaseSensitive() {
      new Group17Keyspaces(this).required_r17_11_namesAreExactAndCaseSensitive();
    }

    @Test
    default void required_r17_12_emptyKeyspacesSurviveReopen() {
      new Group17Keyspaces(this).required_r17_12_emptyKeyspacesSurviveReopen();
    }

    @Test
    default void required_r17_13_handleConditionalWritesAnswerTruly() {
      new Group17HandleChecks((TckBase) this).required_r17_13_handleConditionalWritesAnswerTruly();
    }

    @Test
    default void required_r17_14_handleVerifyReportsItsKeyspace() throws Exception {
      new Group17HandleChecks((TckBase) this).required_r17_14_handleVerifyReportsItsKeyspace();
    }
  }

  /** Only {@link StoreTck}, a {@link TckBase}, implements {@link Tests}. */
  private Group17Keyspaces(Tests test) {
    super((TckBase) test);
  }

  /**
   * For a kit of chosen rules in this package (a subset a slow engine runs beside the whole kit).
   */
  Group17Keyspaces(TckBase kit) {
    super(kit);
  }

  /** Keyspace names the rules use: one of every allowed character class. */
  private static final List<String> NAMES = List.of("users", "Orders-2", "_x");

  void required_r17_1_keyspacesAreIndependent() {
    require("17.1", Feature.KEYSPACES);
    Store s = open();
    Map<String, Store> spaces = new LinkedHashMap<>();
    Map<String, TreeMap<byte[], byte[]>> models = new LinkedHashMap<>();
    spaces.put(Store.DEFAULT_KEYSPACE, s);
    models.put(Store.DEFAULT_KEYSPACE, newModel());
    for (String n : NAMES) {
      spaces.put(n, s.keyspace(n));
      models.put(n, newModel());
    }
    List<String> order = new ArrayList<>(spaces.keySet());
    SplittableRandom rnd = new SplittableRandom(seed(17));
    for (int op = 0; op < env().ops(); op++) {
      String name = order.get(rnd.nextInt(order.size()));
      Store ks = spaces.get(name);
      TreeMap<byte[], byte[]> model = models.get(name);
      byte[] k = key(rnd.nextInt(32)); // few keys: the spaces hold the same keys
      if (rnd.nextInt(4) == 0) {
        ks.delete(k);
        model.remove(k);
      } else {
        byte[] v = b(name + ":" + op);
        ks.put(k, v);
        model.put(k, v);
      }
      String where = "seed=" + seed(17) + " op #" + op + " keyspace " + name + " key=" + hex(k);
      for (String other : order) {
        assertThat(spaces.get(other).get(k))
            .as(rule("17.1", where + ": keyspace " + other + " holds only its own writes"))
            .isEqualTo(models.get(other).get(k));
      }
    }
    for (String name : order) {
      Store ks = spaces.get(name);
      TreeMap<byte[], byte[]> model = models.get(name);
      if (has(Feature.ORDERED_SCAN)) {
        assertScan("17.1", ks, model, KeyRange.all(), "keyspace " + name + ", seed=" + seed(17));
        if (has(Feature.REVERSE_SCAN)) {
          assertScan(
              "17.1",
              ks,
              model,
              KeyRange.all().reverse(),
              "keyspace " + name + ", seed=" + seed(17));
        }
      }
      if (ks.stats().keyCountExact()) {
        assertThat(ks.stats().keyCount())
            .as(rule("17.1", "stats of keyspace " + name + " count only its keys"))
            .isEqualTo(model.size());
      }
      assertThat(ks.getAll(List.of(key(1), key(2))))
          .as(rule("17.1", "getAll through keyspace " + name))
          .containsExactly(model.get(key(1)), model.get(key(2)));
    }
    assertThat(s.keyspaces())
        .as(rule("17.1", "keyspaces() lists the named keyspaces, sorted, without 'default'"))
        .containsExactly("Orders-2", "_x", "users");
    assertThat(s.keyspace("users").get(key(3)))
        .as(rule("17.1", "a second handle on a keyspace sees the first handle's writes"))
        .isEqualTo(models.get("users").get(key(3)));
  }

  void required_r17_2_keyspacesSurviveReopen() {
    require("17.2", Feature.KEYSPACES);
    require("17.2", Feature.PERSISTENT);
    Store s = open();
    s.put(b("k"), b("root"));
    s.keyspace("users").put(b("k"), b("users"));
    Store orders = s.keyspace("Orders-2");
    for (int i = 0; i < 500; i++) {
      orders.put(key(i), b("o" + i));
    }
    s.compact(); // a rewrite of the store's files must carry its keyspaces
    orders.delete(key(7));
    s = reopen(s);
    assertThat(s.keyspaces())
        .as(rule("17.2", "the keyspaces are listed after reopen"))
        .containsExactly("Orders-2", "users");
    assertThat(s.get(b("k"))).as(rule("17.2", "the store's own key")).isEqualTo(b("root"));
    assertThat(s.keyspace("users").get(b("k")))
        .as(rule("17.2", "a keyspace's key after reopen"))
        .isEqualTo(b("users"));
    Store again = s.keyspace("Orders-2");
    for (int i = 0; i < 500; i++) {
      assertThat(again.get(key(i)))
          .as(rule("17.2", "key " + i + " of keyspace Orders-2 after reopen"))
          .isEqualTo(i == 7 ? null : b("o" + i));
    }
    assertThat(again.get(b("k")))
        .as(rule("17.2", "a key of one keyspace is not in another after reopen"))
        .isNull();
  }

  void required_r17_3_dropRemovesAKeyspaceAndClosesItsHandles() {
    require("17.3", Feature.KEYSPACES);
    Store s = open();
    s.put(key(1), b("root"));
    Store users = s.keyspace("users");
    Store orders = s.keyspace("Orders-2");
    for (int i = 0; i < 100; i++) {
      users.put(key(i), b("u" + i));
    }
    orders.put(key(1), b("order"));
    Cursor c = has(Feature.ORDERED_SCAN) ? users.scan(KeyRange.all()) : null;
    assertThat(s.dropKeyspace("users"))
        .as(rule("17.3", "drop answers true when it existed"))
        .isTrue();
    assertThat(thrown(() -> users.get(key(1))))
        .as(rule("17.3", "a handle of a dropped keyspace is closed"))
        .isInstanceOf(StoreClosedException.class);
    if (c != null) {
      assertThat(thrown(c::hasNext))
          .as(rule("17.3", "a cursor of a dropped keyspace is closed with its handle"))
          .isInstanceOf(StoreClosedException.class);
    }
    assertThat(s.keyspaces())
        .as(rule("17.3", "a dropped keyspace is not listed"))
        .containsExactly("Orders-2");
    assertThat(s.dropKeyspace("users"))
        .as(rule("17.3", "drop answers false when absent"))
        .isFalse();
    assertThat(orders.get(key(1)))
        .as(rule("17.3", "dropping one keyspace leaves another"))
        .isEqualTo(b("order"));
    assertThat(s.get(key(1)))
        .as(rule("17.3", "dropping a keyspace leaves the store's own keys"))
        .isEqualTo(b("root"));
    Store fresh = s.keyspace("users");
    assertThat(fresh.get(key(1)))
        .as(rule("17.3", "a keyspace opened again after drop is empty"))
        .isNull();
    if (has(Feature.ORDERED_SCAN)) {
      assertThat(scanAll(fresh, KeyRange.all()))
          .as(rule("17.3", "a keyspace opened again after drop scans empty"))
          .isEmpty();
    }
    fresh.put(key(2), b("new"));
    assertThat(thrown(() -> s.dropKeyspace(Store.DEFAULT_KEYSPACE)))
        .as(rule("17.3", "the store's own keys cannot be dropped as a keyspace"))
        .isInstanceOf(IllegalArgumentException.class);
    if (has(Feature.PERSISTENT)) {
      s.dropKeyspace("Orders-2");
      Store r = reopen(s);
      assertThat(r.keyspaces()).as(rule("17.3", "a drop survives reopen")).containsExactly("users");
      assertThat(r.keyspace("users").get(key(1)))
          .as(rule("17.3", "the dropped keys stay dropped after reopen"))
          .isNull();
      assertThat(r.keyspace("users").get(key(2)))
          .as(rule("17.3", "the keyspace's new keys survive reopen"))
          .isEqualTo(b("new"));
    }
  }

  void required_r17_4_namesAreChecked() {
    require("17.4", Feature.KEYSPACES);
    Store s = open();
    for (String bad : List.of("", "-x", "a/b", "a b", "a.b", "ü", "x".repeat(65), "default")) {
      assertThat(thrown(() -> s.keyspace(bad)))
          .as(rule("17.4", "keyspace('" + bad + "') is refused with IllegalArgumentException"))
          .isInstanceOf(IllegalArgumentException.class);
    }
    assertThat(thrown(() -> s.keyspace(null)))
        .as(rule("17.4", "a null name is refused with NullPointerException"))
        .isInstanceOf(NullPointerException.class);
    String longest = "K".repeat(64);
    s.keyspace(longest).put(b("a"), b("1"));
    assertThat(s.keyspace(longest).get(b("a")))
        .as(rule("17.4", "a 64-character name works"))
        .isEqualTo(b("1"));
    Store ks = s.keyspace("users");
    assertThat(ks.info().has(Feature.KEYSPACES))
        .as(rule("17.4", "a keyspace handle does not declare KEYSPACES (they do not nest)"))
        .isFalse();
    assertThat(thrown(() -> ks.keyspace("inner")))
        .as(rule("17.4", "a keyspace handle refuses keyspace() with UnsupportedOperationException"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThat(ks.info().engine())
        .as(rule("17.4", "a handle names the engine"))
        .isEqualTo(engine());
    assertThat(s.keyspaces())
        .as(rule("17.4", "refused names created nothing"))
        .containsExactly(longest, "users");
  }

  void required_r17_5_handlesCloseWithTheirStore() {
    require("17.5", Feature.KEYSPACES);
    Store s = open();
    Store a = s.keyspace("users");
    Store b = s.keyspace("Orders-2");
    a.put(b("k"), b("a"));
    b.put(b("k"), b("b"));
    a.close();
    a.close();
    // Every call through the closed handle, its store open: each refused, none acting.
    Map<String, Runnable> calls = new LinkedHashMap<>();
    new Group10Lifecycle(kit).storeCalls("", a, calls);
    calls.put("verify()", a::verify);
    for (Map.Entry<String, Runnable> call : calls.entrySet()) {
      assertThat(thrown(call.getValue()::run))
          .as(
              rule(
                  "17.5",
                  call.getKey()
                      + " through a keyspace handle closed while its store is open throws"
                      + " StoreClosedException (a closed handle refuses every call)"))
          .isInstanceOf(StoreClosedException.class);
    }
    Store again = s.keyspace("users");
    assertThat(List.of(String.valueOf(again.get(b("a"))), String.valueOf(again.get(b("n")))))
        .as(rule("17.5", "no call through the closed handle changed its keyspace"))
        .containsExactly("null", "null");
    assertThat(b.get(b("k")))
        .as(rule("17.5", "closing one handle leaves another open"))
        .isEqualTo(b("b"));
    assertThat(s.keyspace("users").get(b("k")))
        .as(rule("17.5", "closing a handle keeps its keyspace's keys"))
        .isEqualTo(b("a"));
    Cursor c = has(Feature.ORDERED_SCAN) ? b.scan(KeyRange.all()) : null;
    Snapshot snap = has(Feature.SNAPSHOT_READ) ? b.snapshot() : null;
    s.close();
    assertThat(thrown(() -> b.get(b("k"))))
        .as(rule("17.5", "closing the store closes its keyspace handles"))
        .isInstanceOf(StoreClosedException.class);
    assertThat(thrown(() -> b.put(b("k"), b("x"))))
        .as(rule("17.5", "a handle of a closed store refuses writes"))
        .isInstanceOf(StoreClosedException.class);
    if (c != null) {
      assertThat(thrown(c::hasNext))
          .as(rule("17.5", "a handle's cursor is closed with the store"))
          .isInstanceOf(StoreClosedException.class);
    }
    if (snap != null) {
      assertThat(thrown(() -> snap.get(b("k"))))
          .as(rule("17.5", "a handle's snapshot is closed with the store"))
          .isInstanceOf(StoreClosedException.class);
    }
  }

  void required_r17_6_batchesSpanKeyspacesAtomically() {
    require("17.6", Feature.KEYSPACE_BATCH);
    Store s = open();
    Store users = s.keyspace("users");
    s.put(b("gone"), b("x"));
    s.write(
        new WriteBatch()
            .put(b("k"), b("root"))
            .put("users", b("k"), b("users"))
            .put("Orders-2", b("k"), b("orders"))
            .delete(Store.DEFAULT_KEYSPACE, b("gone")));
    assertThat(s.get(b("k"))).as(rule("17.6", "the store's own key")).isEqualTo(b("root"));
    assertThat(s.get(b("gone"))).as(rule("17.6", "a delete in 'default'")).isNull();
    assertThat(users.get(b("k"))).as(rule("17.6", "the put into 'users'")).isEqualTo(b("users"));
    assertThat(s.keyspaces())
        .as(rule("17.6", "a batch naming an absent keyspace creates it"))
        .containsExactly("Orders-2", "users");
    users.write(
        new WriteBatch().put(b("j"), b("own")).put(Store.DEFAULT_KEYSPACE, b("j"), b("root")));
    assertThat(users.get(b("j")))
        .as(rule("17.6", "an unnamed operation applies to the handle's keyspace"))
        .isEqualTo(b("own"));
    assertThat(s.get(b("j")))
        .as(rule("17.6", "'default' from a handle is the store's own keys"))
        .isEqualTo(b("root"));
    byte[] tooBig = new byte[s.info().limits().maxValueSize() + 1];
    boolean tooBigFits = s.info().limits().maxValueSize() < Integer.MAX_VALUE - 8;
    WriteBatch bad =
        new WriteBatch()
            .put(b("k"), b("changed"))
            .put("users", b("k"), b("changed"))
            .delete("Orders-2", b("k"))
            .put("fresh", b("k"), b("v"));
    bad.put("Orders-2", b("k2"), tooBigFits ? tooBig : b("x"));
    if (tooBigFits) {
      assertThat(thrown(() -> s.write(bad)))
          .as(rule("17.6", "a batch with a value over the limit in one keyspace is refused"))
          .isInstanceOf(IllegalArgumentException.class);
      assertThat(s.get(b("k")))
          .as(rule("17.6", "a refused batch changed nothing in 'default'"))
          .isEqualTo(b("root"));
      assertThat(users.get(b("k")))
          .as(rule("17.6", "a refused batch changed nothing in 'users'"))
          .isEqualTo(b("users"));
      assertThat(s.keyspace("Orders-2").get(b("k")))
          .as(rule("17.6", "a refused batch changed nothing in 'Orders-2'"))
          .isEqualTo(b("orders"));
      assertThat(s.keyspaces())
          .as(rule("17.6", "a refused batch created no keyspace"))
          .containsExactly("Orders-2", "users");
    }
    if (has(Feature.PERSISTENT)) {
      Store r = reopen(s);
      assertThat(r.keyspace("Orders-2").get(b("k")))
          .as(rule("17.6", "a batch spanning keyspaces survives reopen"))
          .isEqualTo(b("orders"));
    }
  }

  void required_r17_7_keyspaceCallsWithoutTheFeatureAreRefused() {
    Store s = open();
    boolean keyspaces = has(Feature.KEYSPACES);
    boolean batches = has(Feature.KEYSPACE_BATCH);
    org.junit.jupiter.api.Assumptions.assumeTrue(
        !keyspaces || !batches,
        "[17.7] skipped: engine '" + engine() + "' declares KEYSPACES and KEYSPACE_BATCH");
    s.put(b("k"), b("before"));
    if (!keyspaces) {
      assertThat(thrown(() -> s.keyspace("users")))
          .as(rule("17.7", "keyspace() without KEYSPACES throws UnsupportedOperationException"))
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("KEYSPACES");
      assertThat(thrown(s::keyspaces))
          .as(rule("17.7", "keyspaces() without KEYSPACES is refused"))
          .isInstanceOf(UnsupportedOperationException.class);
      assertThat(thrown(() -> s.dropKeyspace("users")))
          .as(rule("17.7", "dropKeyspace() without KEYSPACES is refused"))
          .isInstanceOf(UnsupportedOperationException.class);
    }
    if (has(Feature.ATOMIC_BATCH)) {
      WriteBatch spanning = new WriteBatch().put(b("k"), b("after")).put("users", b("k"), b("u"));
      assertThat(thrown(() -> s.write(spanning)))
          .as(rule("17.7", "a batch naming another keyspace without KEYSPACE_BATCH is refused"))
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("KEYSPACE_BATCH");
      assertThat(s.get(b("k")))
          .as(rule("17.7", "the refused batch applied nothing"))
          .isEqualTo(b("before"));
      s.write(new WriteBatch().put(Store.DEFAULT_KEYSPACE, b("k"), b("own")));
      assertThat(s.get(b("k")))
          .as(rule("17.7", "a batch naming only the store's own keyspace needs no KEYSPACE_BATCH"))
          .isEqualTo(b("own"));
    }
  }

  void required_r17_8_aKeyspaceHandleKeepsTheStoreContract() throws Exception {
    require("17.8", Feature.KEYSPACES);
    Store s = open();
    Store ks = s.keyspace("users");
    if (has(Feature.CONDITIONAL_WRITE)) {
      s.put(b("c"), b("root"));
      assertThat(ks.putIfAbsent(b("c"), b("1")))
          .as(rule("17.8", "putIfAbsent in a keyspace ignores the store's own key"))
          .isTrue();
      assertThat(ks.replace(b("c"), b("1"), b("2")))
          .as(rule("17.8", "replace in a keyspace"))
          .isTrue();
      assertThat(s.replace(b("c"), b("1"), b("3")))
          .as(rule("17.8", "replace in the store does not see the keyspace's value"))
          .isFalse();
      assertThat(ks.delete(b("c"), b("2")))
          .as(rule("17.8", "delete(key, expected) in a keyspace"))
          .isTrue();
      assertThat(s.get(b("c")))
          .as(rule("17.8", "the store's key is untouched"))
          .isEqualTo(b("root"));
    }
    if (has(Feature.SNAPSHOT_READ)) {
      ks.put(b("s"), b("old"));
      try (Snapshot snap = ks.snapshot()) {
        ks.put(b("s"), b("new"));
        s.put(b("s"), b("root"));
        assertThat(snap.get(b("s")))
            .as(rule("17.8", "a keyspace's snapshot reads as of its opening"))
            .isEqualTo(b("old"));
        if (has(Feature.ORDERED_SCAN)) {
          assertThat(keysOf(scanAll(snap, KeyRange.all())))
              .as(rule("17.8", "a keyspace's snapshot scans only the keyspace"))
              .containsExactly(hex(b("s")));
        }
      }
    }
    if (has(Feature.ATOMIC_BATCH)) {
      ks.write(new WriteBatch().put(b("b1"), b("1")).put(b("b2"), b("2")).delete(b("s")));
      assertThat(ks.getAll(List.of(b("b1"), b("b2"), b("s"))))
          .as(rule("17.8", "a batch written to a keyspace handle applies to the keyspace"))
          .containsExactly(b("1"), b("2"), null);
      assertThat(s.get(b("b1"))).as(rule("17.8", "and not to the store's own keys")).isNull();
    }
    ks.sync();
    assertThat(thrown(() -> ks.put(new byte[s.info().limits().maxKeySize() + 1], b("v"))))
        .as(rule("17.8", "a handle checks key limits like the store"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(ks.info().durability())
        .as(rule("17.8", "a handle has the store's durability"))
        .isEqualTo(s.info().durability());
  }

  void required_r17_9_backupHoldsEveryKeyspace() {
    require("17.9", Feature.KEYSPACES);
    require("17.9", Feature.BACKUP);
    Store s = open();
    s.put(b("k"), b("root"));
    Store users = s.keyspace("users");
    for (int i = 0; i < 300; i++) {
      users.put(key(i), b("u" + i));
    }
    s.keyspace("Orders-2").put(b("k"), b("orders"));
    s.keyspace("empty");
    Path target = tempDir.resolve("backup-keyspaces");
    s.backup(target);
    users.put(key(1000), b("after"));
    Store copy = open(config(target, Durability.BUFFERED));
    assertThat(copy.keyspaces())
        .as(rule("17.9", "the backup lists the store's keyspaces"))
        .containsExactly("Orders-2", "empty", "users");
    assertThat(copy.get(b("k")))
        .as(rule("17.9", "the store's own key in the backup"))
        .isEqualTo(b("root"));
    Store copyUsers = copy.keyspace("users");
    for (int i = 0; i < 300; i++) {
      assertThat(copyUsers.get(key(i)))
          .as(rule("17.9", "key " + i + " of keyspace users in the backup"))
          .isEqualTo(b("u" + i));
    }
    assertThat(copyUsers.get(key(1000)))
        .as(rule("17.9", "a keyspace write made after backup() returned is not in the backup"))
        .isNull();
    assertThat(copy.keyspace("Orders-2").get(b("k")))
        .as(rule("17.9", "keyspace Orders-2 in the backup"))
        .isEqualTo(b("orders"));
  }

  void required_r17_10_readOnlyOpensExistingKeyspacesOnly() {
    require("17.10", Feature.KEYSPACES);
    require("17.10", Feature.PERSISTENT);
    Store s = open();
    s.keyspace("users").put(b("k"), b("v"));
    close(s);
    Store ro = open(config(Durability.BUFFERED).toBuilder().readOnly(true).build());
    assertThat(ro.keyspaces())
        .as(rule("17.10", "a read-only store lists its keyspaces"))
        .containsExactly("users");
    Store users = ro.keyspace("users");
    assertThat(users.get(b("k")))
        .as(rule("17.10", "a read-only store reads a keyspace"))
        .isEqualTo(b("v"));
    assertThat(thrown(() -> users.put(b("k"), b("w"))))
        .as(rule("17.10", "a read-only store's keyspace refuses writes"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThat(thrown(() -> ro.keyspace("absent")))
        .as(rule("17.10", "a read-only store cannot create a keyspace"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThat(thrown(() -> ro.dropKeyspace("users")))
        .as(rule("17.10", "a read-only store cannot drop a keyspace"))
        .isInstanceOf(UnsupportedOperationException.class);
    close(ro);
    Store rw = open();
    assertThat(rw.keyspaces())
        .as(rule("17.10", "the refused calls changed nothing"))
        .containsExactly("users");
  }

  /**
   * Names 17.11 tells apart: the same word in three cases, names that are prefixes of others, and
   * names that differ in {@code _} against {@code -}.
   */
  private static final List<String> EXACT_NAMES =
      List.of("users", "Users", "USERS", "user", "users2", "a", "a_b", "a-b");

  /**
   * Keys 17.11 writes, by keyspace, beside {@code k}: where a keyspace's key is its name joined to
   * the key (with {@code _}, {@code -} or nothing between), these meet another keyspace's {@code
   * k}.
   */
  private static final Map<String, List<String>> JOINING_KEYS =
      Map.of("user", List.of("sk", "s_k", "s-k"), "a", List.of("_b_k", "b_k", "-b-k", "b-k"));

  /**
   * 17.11: keyspace names are exact: names differing only in case, or one a prefix of another, or
   * in {@code _} against {@code -}, are different keyspaces, each holding only its own keys, all
   * listed; dropping one leaves the others.
   */
  void required_r17_11_namesAreExactAndCaseSensitive() {
    require("17.11", Feature.KEYSPACES);
    Store s = open();
    Map<String, TreeMap<byte[], byte[]>> models = new LinkedHashMap<>();
    for (String n : EXACT_NAMES) {
      Store ks = s.keyspace(n);
      TreeMap<byte[], byte[]> model = newModel();
      List<String> keys = new ArrayList<>(List.of("k"));
      keys.addAll(JOINING_KEYS.getOrDefault(n, List.of()));
      for (String k : keys) {
        ks.put(b(k), b(n + "/" + k));
        model.put(b(k), b(n + "/" + k));
      }
      models.put(n, model);
    }
    s.put(b("k"), b("default/k"));
    assertExactKeyspaces(s, models, "after the writes");
    assertThat(s.dropKeyspace("Users"))
        .as(rule("17.11", "dropKeyspace(\"Users\") answers true"))
        .isTrue();
    models.remove("Users");
    assertExactKeyspaces(s, models, "after dropping 'Users'");
    assertThat(s.keyspace("Users").get(b("k")))
        .as(rule("17.11", "'Users' opened again after its drop is empty (and 'users' unchanged)"))
        .isNull();
    assertThat(s.get(b("k"))).as(rule("17.11", "the store's own key k")).isEqualTo(b("default/k"));
  }

  /** 17.11: each keyspace of {@code models} holds exactly its model, and all are listed. */
  private void assertExactKeyspaces(
      Store s, Map<String, TreeMap<byte[], byte[]>> models, String when) {
    List<String> probes = new ArrayList<>(List.of("k"));
    JOINING_KEYS.values().forEach(probes::addAll);
    for (Map.Entry<String, TreeMap<byte[], byte[]>> m : models.entrySet()) {
      Store ks = s.keyspace(m.getKey());
      for (String k : probes) {
        assertThat(ks.get(b(k)))
            .as(
                rule(
                    "17.11",
                    "key "
                        + k
                        + " of keyspace '"
                        + m.getKey()
                        + "' "
                        + when
                        + " (names that differ in case, by a prefix or in _ and - are different"
                        + " keyspaces)"))
            .isEqualTo(m.getValue().get(b(k)));
      }
      if (has(Feature.ORDERED_SCAN)) {
        assertScan("17.11", ks, m.getValue(), KeyRange.all(), "keyspace '" + m.getKey() + "'");
      }
      ks.close();
    }
    assertThat(s.keyspaces())
        .as(rule("17.11", "keyspaces() " + when + " lists every name exactly, sorted"))
        .containsExactlyElementsOf(new java.util.TreeSet<>(models.keySet()));
  }

  /**
   * 17.12: a keyspace created and never written, and one whose every key was deleted, outlive a
   * reopen (listed and empty); so does one created just before a {@code compact()}.
   */
  void required_r17_12_emptyKeyspacesSurviveReopen() {
    require("17.12", Feature.KEYSPACES);
    require("17.12", Feature.PERSISTENT);
    Store s = open();
    s.put(b("k"), b("root"));
    s.keyspace("empty");
    Store emptied = s.keyspace("emptied");
    emptied.put(b("k"), b("v"));
    emptied.delete(b("k"));
    s = reopen(s);
    assertThat(s.keyspaces())
        .as(
            rule(
                "17.12",
                "after a reopen, a keyspace created and never written ('empty') and one whose keys"
                    + " were all deleted ('emptied') are listed"))
        .containsExactly("emptied", "empty");
    for (String n : List.of("empty", "emptied")) {
      Store ks = s.keyspace(n);
      assertThat(ks.get(b("k")))
          .as(rule("17.12", "keyspace '" + n + "' is empty after a reopen"))
          .isNull();
      if (has(Feature.ORDERED_SCAN)) {
        assertThat(scanAll(ks, KeyRange.all()))
            .as(rule("17.12", "keyspace '" + n + "' scans empty after a reopen"))
            .isEmpty();
      }
    }
    s.keyspace("later");
    s.compact();
    s = reopen(s);
    assertThat(s.keyspaces())
        .as(rule("17.12", "an empty keyspace created before compact() is listed after a reopen"))
        .containsExactly("emptied", "empty", "later");
    assertThat(s.get(b("k")))
        .as(rule("17.12", "the store's own key after the reopens"))
        .isEqualTo(b("root"));
  }
}
