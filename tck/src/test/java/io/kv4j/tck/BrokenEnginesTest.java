package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import io.kv4j.tck.ref.Defect;
import java.lang.reflect.Method;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;

/**
 * Proves the kit: each deliberately broken engine is caught by the rule meant to catch it, and the
 * same rule passes on the defect-free engine (so the failure is the defect's, not the rule's).
 */
class BrokenEnginesTest {

  /** The kit on the {@code ref} engine with the defect named in a system property. */
  abstract static class DefectTck extends StoreTck {
    abstract Defect defect();

    @Override
    protected StoreConfig config(Path directory, Durability durability) {
      return StoreConfig.builder("ref")
          .path(directory)
          .durability(durability)
          .option("defect", defect().option())
          .build();
    }
  }

  static final class SharedKeyspaceKeys extends DefectTck {
    @Override
    Defect defect() {
      return Defect.SHARED_KEYSPACE_KEYS;
    }
  }

  static final class DropKeepsKeys extends DefectTck {
    @Override
    Defect defect() {
      return Defect.DROP_KEEPS_KEYS;
    }
  }

  static final class KeyspaceByKeyspaceBatch extends DefectTck {
    @Override
    Defect defect() {
      return Defect.KEYSPACE_BY_KEYSPACE_BATCH;
    }
  }

  static final class BackupWithoutKeyspaces extends DefectTck {
    @Override
    Defect defect() {
      return Defect.BACKUP_WITHOUT_KEYSPACES;
    }
  }

  static final class CompactForgetsKeyspaces extends DefectTck {
    @Override
    Defect defect() {
      return Defect.COMPACT_FORGETS_KEYSPACES;
    }
  }

  static final class None extends DefectTck {
    @Override
    Defect defect() {
      return Defect.NONE;
    }
  }

  static final class SignedOrder extends DefectTck {
    @Override
    Defect defect() {
      return Defect.SIGNED_ORDER;
    }
  }

  static final class NonAtomicBatch extends DefectTck {
    @Override
    Defect defect() {
      return Defect.NON_ATOMIC_BATCH;
    }
  }

  static final class LostDeletes extends DefectTck {
    @Override
    Defect defect() {
      return Defect.LOST_DELETES;
    }
  }

  static final class ExclusiveAsInclusive extends DefectTck {
    @Override
    Defect defect() {
      return Defect.EXCLUSIVE_AS_INCLUSIVE;
    }
  }

  static final class ReverseOffByOne extends DefectTck {
    @Override
    Defect defect() {
      return Defect.REVERSE_OFF_BY_ONE;
    }
  }

  static final class EmptyValueAsNull extends DefectTck {
    @Override
    Defect defect() {
      return Defect.EMPTY_VALUE_AS_NULL;
    }
  }

  static final class CursorOutlivesStore extends DefectTck {
    @Override
    Defect defect() {
      return Defect.CURSOR_OUTLIVES_STORE;
    }
  }

  static final class AckBeforeDurable extends DefectTck {
    @Override
    Defect defect() {
      return Defect.ACK_BEFORE_DURABLE;
    }
  }

  static final class LostConcurrentWrites extends DefectTck {
    @Override
    Defect defect() {
      return Defect.LOST_CONCURRENT_WRITES;
    }
  }

  static final class LimitIgnored extends DefectTck {
    @Override
    Defect defect() {
      return Defect.LIMIT_IGNORED;
    }
  }

  static final class NoLock extends DefectTck {
    @Override
    Defect defect() {
      return Defect.NO_LOCK;
    }
  }

  static final class FakeSnapshot extends DefectTck {
    @Override
    Defect defect() {
      return Defect.FAKE_SNAPSHOT;
    }
  }

  static final class AliasedValues extends DefectTck {
    @Override
    Defect defect() {
      return Defect.ALIASED_VALUES;
    }
  }

  static final class CompactDropsEmptyValues extends DefectTck {
    @Override
    Defect defect() {
      return Defect.COMPACT_DROPS_EMPTY_VALUES;
    }
  }

  static final class TornOverwrite extends DefectTck {
    @Override
    Defect defect() {
      return Defect.TORN_OVERWRITE;
    }
  }

  static final class MissingLogAsNewStore extends DefectTck {
    @Override
    Defect defect() {
      return Defect.MISSING_LOG_AS_NEW_STORE;
    }
  }

  static final class ShortLogAsTornTail extends DefectTck {
    @Override
    Defect defect() {
      return Defect.SHORT_LOG_AS_TORN_TAIL;
    }
  }

  static final class CrashOnShortLog extends DefectTck {
    @Override
    Defect defect() {
      return Defect.CRASH_ON_SHORT_LOG;
    }
  }

  static final class NoChecksumCheck extends DefectTck {
    @Override
    Defect defect() {
      return Defect.NO_CHECKSUM_CHECK;
    }
  }

  static final class ShrinksOnFailedOpen extends DefectTck {
    @Override
    Defect defect() {
      return Defect.SHRINKS_ON_FAILED_OPEN;
    }
  }

  static final class DamageAsIllegalState extends DefectTck {
    @Override
    Defect defect() {
      return Defect.DAMAGE_AS_ILLEGAL_STATE;
    }
  }

  static final class HangOnDamage extends DefectTck {
    @Override
    Defect defect() {
      return Defect.HANG_ON_DAMAGE;
    }

    /** Short, so that proving the kill costs seconds; the hang is certain, not a timing race. */
    @Override
    Duration damageChildTimeout() {
      return Duration.ofSeconds(10);
    }
  }

  static final class IgnoresIdentity extends DefectTck {
    @Override
    Defect defect() {
      return Defect.IGNORES_IDENTITY;
    }
  }

  static final class StalledWrites extends DefectTck {
    @Override
    Defect defect() {
      return Defect.STALLED_WRITES;
    }

    /** Short, so that proving the time limit costs seconds; the stall is certain. */
    @Override
    Duration threadTimeout() {
      return Duration.ofSeconds(5);
    }
  }

  static final class DeadlockedWrites extends DefectTck {
    @Override
    Defect defect() {
      return Defect.DEADLOCKED_WRITES;
    }

    /** Short, so that proving the time limits costs seconds; the deadlock is certain. */
    @Override
    Duration threadTimeout() {
      return Duration.ofSeconds(5);
    }

    @Override
    Duration ruleTimeout() {
      return Duration.ofSeconds(10);
    }
  }

  static final class HalfDurableBatch extends DefectTck {
    @Override
    Defect defect() {
      return Defect.HALF_DURABLE_BATCH;
    }
  }

  static final class HasNextAdvances extends DefectTck {
    @Override
    Defect defect() {
      return Defect.HASNEXT_ADVANCES;
    }
  }

  static final class RetainsBatchArrays extends DefectTck {
    @Override
    Defect defect() {
      return Defect.RETAINS_BATCH_ARRAYS;
    }
  }

  static final class ForEachLeaksCursor extends DefectTck {
    @Override
    Defect defect() {
      return Defect.FOREACH_LEAKS_CURSOR;
    }
  }

  static final class LazySnapshot extends DefectTck {
    @Override
    Defect defect() {
      return Defect.LAZY_SNAPSHOT;
    }
  }

  static final class JvmLocalLock extends DefectTck {
    @Override
    Defect defect() {
      return Defect.JVM_LOCAL_LOCK;
    }
  }

  static final class RacyKeyCount extends DefectTck {
    @Override
    Defect defect() {
      return Defect.RACY_KEY_COUNT;
    }
  }

  static final class HalfVisibleBatch extends DefectTck {
    @Override
    Defect defect() {
      return Defect.HALF_VISIBLE_BATCH;
    }
  }

  static final class SplitLocks extends DefectTck {
    @Override
    Defect defect() {
      return Defect.SPLIT_LOCKS;
    }
  }

  static final class CompactOutsideLock extends DefectTck {
    @Override
    Defect defect() {
      return Defect.COMPACT_OUTSIDE_LOCK;
    }
  }

  static final class NeverSyncs extends DefectTck {
    @Override
    Defect defect() {
      return Defect.NEVER_SYNCS;
    }
  }

  static final class RacyConditionalWrite extends DefectTck {
    @Override
    Defect defect() {
      return Defect.RACY_CONDITIONAL_WRITE;
    }
  }

  static final class PutIfAbsentOverwrites extends DefectTck {
    @Override
    Defect defect() {
      return Defect.PUT_IF_ABSENT_OVERWRITES;
    }
  }

  static final class LiveSnapshot extends DefectTck {
    @Override
    Defect defect() {
      return Defect.LIVE_SNAPSHOT;
    }
  }

  static final class GetAllInKeyOrder extends DefectTck {
    @Override
    Defect defect() {
      return Defect.GETALL_IN_KEY_ORDER;
    }
  }

  static final class BackupFromLastSync extends DefectTck {
    @Override
    Defect defect() {
      return Defect.BACKUP_FROM_LAST_SYNC;
    }
  }

  static final class IgnoredConditions extends DefectTck {
    @Override
    Defect defect() {
      return Defect.IGNORED_CONDITIONS;
    }
  }

  static final class RacyConditionalBatch extends DefectTck {
    @Override
    Defect defect() {
      return Defect.RACY_CONDITIONAL_BATCH;
    }
  }

  static final class ConditionsSeeOwnWrites extends DefectTck {
    @Override
    Defect defect() {
      return Defect.CONDITIONS_SEE_OWN_WRITES;
    }
  }

  static final class ConditionsIgnoreKeyspace extends DefectTck {
    @Override
    Defect defect() {
      return Defect.CONDITIONS_IGNORE_KEYSPACE;
    }
  }

  static final class UnlockedIndex extends DefectTck {
    @Override
    Defect defect() {
      return Defect.UNLOCKED_INDEX;
    }

    /** A tree broken by the race may make a lookup loop forever: fail in a minute, not ten. */
    @Override
    Duration threadTimeout() {
      return Duration.ofSeconds(60);
    }
  }

  /**
   * Each broken engine, the rule that must catch it, and a fragment its failure message must hold
   * (empty when the rule's tag is enough).
   */
  static Stream<Arguments> defects() {
    return Stream.of(
        Arguments.of(SignedOrder.class, "required_r2_1_unsignedByteOrder", List.of()),
        Arguments.of(
            NonAtomicBatch.class, "required_r5_2_invalidOperationAppliesNothing", List.of()),
        Arguments.of(LostDeletes.class, "required_r6_2_deletesStayDeleted", List.of()),
        Arguments.of(ExclusiveAsInclusive.class, "required_r3_1_boundMatrixForward", List.of()),
        Arguments.of(ReverseOffByOne.class, "required_r3_2_boundMatrixReverse", List.of()),
        Arguments.of(EmptyValueAsNull.class, "required_r1_5_emptyValueIsNotAbsent", List.of()),
        Arguments.of(CursorOutlivesStore.class, "required_r4_3_cursorDiesWithStore", List.of()),
        Arguments.of(
            AckBeforeDurable.class, "required_r7_2_killBufferedKeepsAcknowledgedWrites", List.of()),
        Arguments.of(LostConcurrentWrites.class, "required_r8_1_threadsOnDisjointKeys", List.of()),
        Arguments.of(LimitIgnored.class, "required_r3_4_limits", List.of()),
        Arguments.of(NoLock.class, "required_r10_3_secondOpenIsLocked", List.of()),
        Arguments.of(
            FakeSnapshot.class, "required_r4_5_snapshotCursorSeesNoLaterWrites", List.of()),
        Arguments.of(AliasedValues.class, "required_r1_7_returnedArraysAreCopies", List.of()),
        Arguments.of(
            CompactDropsEmptyValues.class, "required_r10_10_compactKeepsEveryEntry", List.of()),
        Arguments.of(
            TornOverwrite.class,
            "required_r7_5_killDuringOverwritesLeavesOldOrNewValue",
            List.of()),
        Arguments.of(
            StalledWrites.class,
            "required_r8_1_threadsOnDisjointKeys",
            List.of("threads did not finish within 5 s", "kv4j-tck-")),
        Arguments.of(
            DeadlockedWrites.class,
            "required_r8_1_threadsOnDisjointKeys",
            List.of("threads did not finish within 5 s", "kv4j-tck-", "ReentrantLock.lock")),
        Arguments.of(
            DeadlockedWrites.class,
            "required_r1_9_manyKeysIndependent",
            List.of(
                "did not finish within 10 s (kv4j.tck.ruleTimeoutSeconds)",
                "kv4j-tck-rule-1.9",
                "ReentrantLock.lock")),
        Arguments.of(
            HalfDurableBatch.class,
            "required_r7_3_crashNeverLeavesHalfABatch",
            List.of("half a batch applied")),
        Arguments.of(
            ShortLogAsTornTail.class,
            "required_r12_1_fileTruncatedToHalf",
            List.of("data.log truncated from", "key d/")),
        Arguments.of(
            CrashOnShortLog.class,
            "required_r12_1_fileTruncatedToHalf",
            List.of(
                "data.log truncated from",
                "exit code 134",
                "a new child JVM ran the cases after it")),
        Arguments.of(
            MissingLogAsNewStore.class,
            "required_r12_2_fileTruncatedToZero",
            List.of("data.log truncated from", "to 0 bytes", "key d/", "is silently lost")),
        Arguments.of(
            MissingLogAsNewStore.class,
            "required_r12_3_fileDeleted",
            List.of("data.log deleted", "key d/", "is silently lost")),
        Arguments.of(
            LostDeletes.class,
            "required_r12_3_fileDeleted",
            List.of("kv4j.store deleted", "deleted key d/", "reads a value")),
        Arguments.of(
            NoChecksumCheck.class,
            "required_r12_4_bitFlipped",
            List.of("data.log with bit 4 of the byte at offset", "key d/", "wrong value")),
        Arguments.of(
            ShrinksOnFailedOpen.class,
            "required_r12_4_bitFlipped",
            List.of("data.log with bit 4", "the failed open shortened data.log")),
        Arguments.of(
            DamageAsIllegalState.class,
            "required_r12_5_blockZeroed",
            List.of("data.log with bytes", "java.lang.IllegalStateException")),
        Arguments.of(
            HangOnDamage.class,
            "required_r12_5_blockZeroed",
            List.of(
                "data.log with bytes",
                "did not finish within 10 s",
                "cases 2..2 were not run after the timeout in case 1")),
        Arguments.of(
            IgnoresIdentity.class,
            "required_r12_6_foreignStoreRefused",
            List.of("opened a directory holding a 'tck-foreign' store")),
        Arguments.of(
            HasNextAdvances.class, "required_r4_9_repeatedHasNextDoesNotAdvance", List.of()),
        Arguments.of(
            RetainsBatchArrays.class,
            "required_r5_7_batchIsReusableAndNotRetained",
            List.of("copied the key and value")),
        Arguments.of(
            ForEachLeaksCursor.class,
            "required_r4_10_forEachReleasesCursorWhenActionThrows",
            List.of("forEach closed its cursor")),
        Arguments.of(
            LazySnapshot.class,
            "required_r4_5_snapshotCursorSeesNoLaterWrites",
            List.of("after scan() returned")),
        Arguments.of(
            JvmLocalLock.class,
            "required_r10_11_secondProcessIsLocked",
            List.of("another process")),
        Arguments.of(
            RacyKeyCount.class,
            "required_r8_5_exactKeyCountUnderConcurrentWriters",
            List.of("flagged exact")),
        Arguments.of(
            HalfVisibleBatch.class,
            "required_r8_6_batchesAreNeverHalfVisible",
            List.of("half a batch")),
        Arguments.of(
            SplitLocks.class,
            "required_r8_7_sharedKeysKeepTheServedWinnerAfterReopen",
            List.of("before the reopen")),
        Arguments.of(
            CompactOutsideLock.class,
            "required_r10_12_compactDuringWritesLosesNothing",
            List.of("compactions run during writes")),
        Arguments.of(
            NeverSyncs.class,
            "required_r7_6_syncAcknowledgesOnlyAfterASync",
            List.of("was written with no fsync")),
        Arguments.of(
            LostConcurrentWrites.class, "required_r8_8_manyWritersMatchModel", List.of("[8.8]")),
        Arguments.of(
            RacyConditionalWrite.class,
            "required_r13_2_replaceLoopsLoseNoIncrement",
            List.of("an increment was lost")),
        Arguments.of(
            RacyConditionalWrite.class, "required_r13_3_putIfAbsentHasOneWinner", List.of("won")),
        Arguments.of(
            PutIfAbsentOverwrites.class,
            "required_r13_1_conditionalWritesMatchAModel",
            List.of("putIfAbsent answers whether the key was absent", "seed=")),
        Arguments.of(
            LiveSnapshot.class,
            "required_r14_1_snapshotIgnoresLaterWrites",
            List.of("read through the snapshot holds its old value")),
        Arguments.of(
            LiveSnapshot.class, "required_r14_2_snapshotNeverSeesHalfABatch", List.of("pair ")),
        Arguments.of(
            GetAllInKeyOrder.class,
            "required_r15_1_getAllReturnsValuesInKeyOrder",
            List.of("is that of key")),
        Arguments.of(
            BackupFromLastSync.class,
            "required_r16_1_backupIsAnOpenableCopy",
            List.of("in the backup")),
        Arguments.of(
            BackupFromLastSync.class,
            "required_r16_2_backupWhileWritingHoldsAPrefix",
            List.of("acknowledged before backup() started")),
        Arguments.of(
            SharedKeyspaceKeys.class,
            "required_r17_1_keyspacesAreIndependent",
            List.of("holds only its own writes", "seed=")),
        Arguments.of(
            DropKeepsKeys.class,
            "required_r17_3_dropRemovesAKeyspaceAndClosesItsHandles",
            List.of("opened again after drop is empty")),
        Arguments.of(
            KeyspaceByKeyspaceBatch.class,
            "required_r17_6_batchesSpanKeyspacesAtomically",
            List.of("a refused batch changed nothing in 'default'")),
        Arguments.of(
            BackupWithoutKeyspaces.class,
            "required_r17_9_backupHoldsEveryKeyspace",
            List.of("the backup lists the store's keyspaces")),
        Arguments.of(
            CompactForgetsKeyspaces.class,
            "required_r17_2_keyspacesSurviveReopen",
            List.of("the keyspaces are listed after reopen")),
        Arguments.of(
            IgnoredConditions.class,
            "required_r18_2_failedConditionAppliesNothing",
            List.of("writeIf answers false")),
        Arguments.of(
            IgnoredConditions.class,
            "required_r18_1_writeIfMatchesAModel",
            List.of("every condition held", "seed=")),
        Arguments.of(
            RacyConditionalBatch.class,
            "required_r18_4_optimisticTransfersLoseNothing",
            List.of("seed=")),
        Arguments.of(
            ConditionsSeeOwnWrites.class,
            "required_r18_3_conditionsSeeTheStoreBeforeTheBatch",
            List.of("the batch itself writes")),
        Arguments.of(
            ConditionsIgnoreKeyspace.class,
            "required_r18_6_keyspaceConditionsCheckTheirKeyspace",
            List.of("reads users' key")));
  }

  /**
   * A race is caught in practice, not in every run: the unlocked {@code TreeMap} index is caught by
   * 8.8 in most runs (36 of 36 in a loop, but once not in a whole build), so the kit gets up to 8
   * runs and must fail at least one of them with the rule's tag, while the defect-free engine
   * passes the rule (the control runs of {@link #brokenEngine_isCaughtByItsRule} for the other 8.8
   * case).
   */
  @org.junit.jupiter.api.Test
  void unlockedIndex_isCaughtBy8_8InPractice() {
    String rule = "required_r8_8_manyWritersMatchModel";
    List<String> passes = new java.util.ArrayList<>();
    for (int attempt = 1; attempt <= 8; attempt++) {
      Events e = execute(UnlockedIndex.class, rule);
      if (e.failed().count() == 1) {
        Throwable t =
            e.failed().stream()
                .findFirst()
                .orElseThrow()
                .getRequiredPayload(org.junit.platform.engine.TestExecutionResult.class)
                .getThrowable()
                .orElseThrow();
        assertThat(t.getMessage()).as("caught in run %d of 8", attempt).startsWith("[8.8]");
        return;
      }
      passes.add("run " + attempt + ": " + e.succeeded().count() + " passed");
    }
    throw new AssertionError(
        "8 runs of 8.8 did not catch an index changed outside the write lock: " + passes);
  }

  @ParameterizedTest(name = "{0} is caught by {1}")
  @MethodSource("defects")
  void brokenEngine_isCaughtByItsRule(
      Class<? extends DefectTck> broken, String ruleMethod, List<String> details) {
    Events caught = run(broken, ruleMethod);
    assertThat(caught.failed().count())
        .as("the kit must FAIL %s on %s (not pass, not skip)", ruleMethod, broken.getSimpleName())
        .isEqualTo(1);
    Events control = run(None.class, ruleMethod);
    assertThat(control.succeeded().count())
        .as("the same rule %s must PASS on the defect-free engine", ruleMethod)
        .isEqualTo(1);
  }

  @ParameterizedTest(name = "{0} by {1}")
  @MethodSource("defects")
  void brokenEngine_failureNamesTheRule(
      Class<? extends DefectTck> broken, String ruleMethod, List<String> details) {
    Events caught = run(broken, ruleMethod);
    String rule = "[" + ruleMethod.replaceAll("required_r(\\d+)_(\\d+)_.*", "$1.$2") + "]";
    Throwable t =
        caught.failed().stream()
            .findFirst()
            .orElseThrow()
            .getRequiredPayload(org.junit.platform.engine.TestExecutionResult.class)
            .getThrowable()
            .orElseThrow();
    assertThat(t.getMessage()).as("the failure message cites the rule %s", rule).contains(rule);
    if (rule.startsWith("[12.")) {
      assertThat(t.getMessage())
          .as("a damage rule's message starts with its rule")
          .startsWith(rule);
    }
    for (String d : details) {
      assertThat(t.getMessage()).as("the failure message says what was caught").contains(d);
    }
  }

  /**
   * Runs of a rule on an engine class, kept for the test class: both tests of a defect, and every
   * defect's control run of the same rule on the defect-free engine, share one run.
   */
  private static final Map<String, Events> RUNS = new ConcurrentHashMap<>();

  private static Events run(Class<?> cls, String method) {
    return RUNS.computeIfAbsent(cls.getName() + "#" + method, k -> execute(cls, method));
  }

  private static Events execute(Class<?> cls, String method) {
    Method m =
        Arrays.stream(superMethods(cls))
            .filter(x -> x.getName().equals(method))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no rule method " + method));
    return EngineTestKit.engine("junit-jupiter")
        .selectors(selectMethod(cls, m))
        .execute()
        .testEvents();
  }

  private static Method[] superMethods(Class<?> cls) {
    Stream<Method> all = Stream.empty();
    for (Class<?> c = cls; c != null; c = c.getSuperclass()) {
      all = Stream.concat(all, Arrays.stream(c.getDeclaredMethods()));
    }
    return all.toArray(Method[]::new);
  }
}
