package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.WriteBatch;
import java.nio.file.Path;
import java.util.SplittableRandom;

/**
 * Rule 7.8: a crash after a clean close. The other crash rules kill a store that was never closed
 * cleanly; here the store is written and closed cleanly first, then reopened by the crash rules'
 * child JVM ({@link CrashWorker}), written again and killed. An engine that keeps what it knows of
 * the clean close (a marker, a recorded length) across the reopen misreads the crash as damage, or
 * trusts a tail it should have checked.
 */
final class Group07CleanCloseCrash extends RuleGroup {
  /** Keys written and closed cleanly before the crash, apart from {@link CrashWorker}'s. */
  private static final int BEFORE = 200;

  private final Group07Crashes crashes;

  Group07CleanCloseCrash(TckBase kit) {
    super(kit);
    this.crashes = new Group07Crashes(kit);
  }

  void required_r7_8_crashAfterACleanCloseKeepsEveryWrite() throws Exception {
    require("7.8", Feature.PERSISTENT);
    long base = randomSeed();
    int rounds = Math.max(2, env().crashRounds());
    for (int round = 0; round < rounds; round++) {
      long seed = base + round;
      Durability d = round % 2 == 0 ? Durability.SYNC : Durability.BUFFERED;
      Path dir = tempDir.resolve("clean-close-crash-" + d + "-" + round);
      StoreConfig cfg = config(dir, d);
      writeAndCloseCleanly(cfg, seed);
      long target = 20 + new SplittableRandom(seed).nextInt(200);
      long lastAck = crashes.runAndKill("7.8", cfg, seed, target);
      String ctx =
          Group07Crashes.roundContext(d, round, seed, base)
              + ", closed cleanly after "
              + BEFORE
              + " puts, then reopened by a child JVM killed after ack "
              + lastAck;
      Store s;
      try {
        s = open(cfg);
      } catch (RuntimeException e) {
        throw new AssertionError(
            rule(
                "7.8",
                "a store crashed after a clean close and a reopen must open, but the open threw "
                    + e
                    + "; "
                    + ctx),
            e);
      }
      for (int i = 0; i < BEFORE; i++) {
        assertThat(s.get(beforeKey(i)))
            .as(rule("7.8", "put " + i + " made before the clean close survives the crash; " + ctx))
            .isEqualTo(beforeValue(seed, i));
      }
      crashes.checkAcknowledged("7.8", s, seed, lastAck, ctx);
      try {
        s.verify();
      } catch (RuntimeException e) {
        throw new AssertionError(
            rule("7.8", "verify() of the recovered store must pass, but threw " + e + "; " + ctx),
            e);
      }
      close(s);
    }
  }

  /** Opens {@code cfg}, writes {@link #BEFORE} puts (and a batch when the engine has them). */
  private void writeAndCloseCleanly(StoreConfig cfg, long seed) {
    Store s = open(cfg);
    for (int i = 0; i < BEFORE; i++) {
      if (has(Feature.ATOMIC_BATCH) && i % 50 == 49) {
        WriteBatch b = new WriteBatch();
        for (int j = i - 9; j <= i; j++) {
          b.put(beforeKey(j), beforeValue(seed, j));
        }
        s.write(b);
      } else {
        s.put(beforeKey(i), beforeValue(seed, i));
      }
    }
    close(s);
  }

  private static byte[] beforeKey(int i) {
    return b("clean/" + i);
  }

  private static byte[] beforeValue(long seed, int i) {
    return value(new SplittableRandom(seed * 17 + i), 1 + i % 300);
  }
}
