package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.WriteBatch;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;

/**
 * Rules 17.13 and 17.14: what a keyspace handle answers. 17.13: its conditional writes answer true
 * exactly when they acted, compared with the keyspace's own values. 17.14: its {@code verify()}
 * passes on a healthy store and reports a keyspace's damaged file.
 */
final class Group17HandleChecks extends RuleGroup {
  Group17HandleChecks(TckBase kit) {
    super(kit);
  }

  /**
   * 17.13: {@code putIfAbsent}, {@code replace}, {@code delete(key, expected)} and {@code writeIf}
   * through a keyspace handle answer true when they acted and false when they did not, and act only
   * when they say so; the store's own keys and another keyspace, holding the same key, are compared
   * with nothing.
   */
  void required_r17_13_handleConditionalWritesAnswerTruly() {
    require("17.13", Feature.KEYSPACES);
    require("17.13", Feature.CONDITIONAL_WRITE);
    Store s = open();
    Store ks = s.keyspace("users");
    Store other = s.keyspace("Orders-2");
    byte[] k = b("k");
    s.put(k, b("root"));
    other.put(k, b("other"));
    answer("putIfAbsent of an absent key", ks.putIfAbsent(k, b("1")), true, ks, k, b("1"));
    answer("putIfAbsent of a present key", ks.putIfAbsent(k, b("2")), false, ks, k, b("1"));
    answer(
        "replace expecting the store's own value, not the keyspace's",
        ks.replace(k, b("root"), b("3")),
        false,
        ks,
        k,
        b("1"));
    answer(
        "replace expecting another keyspace's value",
        ks.replace(k, b("other"), b("3")),
        false,
        ks,
        k,
        b("1"));
    answer("replace expecting the value held", ks.replace(k, b("1"), b("4")), true, ks, k, b("4"));
    answer("delete(key, expected) of a value not held", ks.delete(k, b("1")), false, ks, k, b("4"));
    answer("delete(key, expected) of the value held", ks.delete(k, b("4")), true, ks, k, null);
    answer("delete(key, expected) of an absent key", ks.delete(k, b("4")), false, ks, k, null);
    answer("replace of an absent key", ks.replace(k, b("4"), b("5")), false, ks, k, null);
    if (has(Feature.CONDITIONAL_BATCH)) {
      byte[] j = b("j");
      byte[] m = b("m");
      s.put(j, b("x"));
      ks.put(j, b("a"));
      answer(
          "writeIf expecting the store's own value",
          ks.writeIf(new WriteBatch().expect(j, b("x")).put(j, b("y"))),
          false,
          ks,
          j,
          b("a"));
      answer(
          "writeIf expecting the keyspace's value",
          ks.writeIf(new WriteBatch().expect(j, b("a")).put(j, b("b"))),
          true,
          ks,
          j,
          b("b"));
      answer(
          "writeIf expecting an absent key",
          ks.writeIf(new WriteBatch().expectAbsent(m).put(m, b("c"))),
          true,
          ks,
          m,
          b("c"));
      answer(
          "writeIf expecting a present key absent",
          ks.writeIf(new WriteBatch().expectAbsent(m).put(m, b("d")).delete(j)),
          false,
          ks,
          m,
          b("c"));
      assertThat(ks.get(j))
          .as(rule("17.13", "a writeIf that answered false through the handle deleted nothing"))
          .isEqualTo(b("b"));
      assertThat(s.get(j))
          .as(rule("17.13", "the handle's writeIf changed nothing in the store's own keys"))
          .isEqualTo(b("x"));
    }
    assertThat(s.get(k))
        .as(rule("17.13", "the handle's conditional writes changed nothing in the store's keys"))
        .isEqualTo(b("root"));
    assertThat(other.get(k))
        .as(rule("17.13", "the handle's conditional writes changed nothing in another keyspace"))
        .isEqualTo(b("other"));
  }

  /** 17.13: the answer, then the keyspace's value after it. */
  private static void answer(
      String what, boolean got, boolean want, Store ks, byte[] key, byte[] value) {
    assertThat(got)
        .as(
            rule(
                "17.13",
                what
                    + " through a keyspace handle answers "
                    + want
                    + " (it answers whether it acted)"))
        .isEqualTo(want);
    assertThat(ks.get(key))
        .as(
            rule(
                "17.13",
                what + " through a keyspace handle " + (want ? "acted" : "changed nothing")))
        .isEqualTo(value);
  }

  /**
   * 17.14: the data set of group 12 written through a keyspace handle with SYNC, synced, the store
   * kept open; {@code verify()} through that handle, another handle and the store passes; then a
   * bit flipped in the middle of the largest data file (the keyspace's data: nothing else was
   * written) must be reported by the handle's {@code verify()} or a full scan through the handle.
   */
  void required_r17_14_handleVerifyReportsItsKeyspace() throws Exception {
    String id = "17.14";
    require(id, Feature.KEYSPACES);
    require(id, Feature.PERSISTENT);
    requireDataInLocationFiles(id);
    long seed = seed(Group12Damage.DEFAULT_SEED);
    Path location = tempDir.resolve("keyspace-verify");
    Store s = open(config(location, Durability.SYNC));
    try {
      if (!s.info().has(Feature.CHECKSUMS)) {
        Assumptions.abort(
            "["
                + id
                + "] skipped: engine '"
                + engine()
                + "' does not declare CHECKSUMS (in this config), so a flipped bit inside a value"
                + " may be the value");
      }
      Store ks = s.keyspace("checked");
      Store quiet = s.keyspace("quiet");
      quiet.put(b("q"), b("quiet"));
      DamageWorker.write(ks, seed, ks.info().has(Feature.ATOMIC_BATCH));
      ks.sync();
      for (Map.Entry<String, Store> healthy :
          Map.of("the keyspace's handle", ks, "another handle", quiet, "the store", s).entrySet()) {
        try {
          healthy.getValue().verify();
        } catch (RuntimeException e) {
          throw new AssertionError(
              rule(
                  id,
                  "verify() through "
                      + healthy.getKey()
                      + " of a healthy store threw "
                      + e
                      + " (a healthy keyspace is never reported damaged); data set seed "
                      + seed),
              e);
        }
      }
      String verdict =
          new OpenStoreDamage(this, id, location, " through the keyspace handle", "keyspace's file")
              .flipAndCheck(ks, seed, ", written through the keyspace handle");
      System.out.println("[" + id + "] " + verdict);
    } finally {
      try {
        s.close();
      } catch (io.kv4j.StoreException e) {
        // A store whose files were damaged under it may fail to close cleanly: allowed.
      }
    }
  }
}
