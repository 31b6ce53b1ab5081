package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import io.kv4j.tck.ref.Defect;
import java.lang.reflect.Method;
import java.nio.file.Path;
import java.util.Arrays;
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

  static Stream<Arguments> defects() {
    return Stream.of(
        Arguments.of(SignedOrder.class, "required_r2_1_unsignedByteOrder"),
        Arguments.of(NonAtomicBatch.class, "required_r5_2_invalidOperationAppliesNothing"),
        Arguments.of(LostDeletes.class, "required_r6_2_deletesStayDeleted"),
        Arguments.of(ExclusiveAsInclusive.class, "required_r3_1_boundMatrixForward"),
        Arguments.of(ReverseOffByOne.class, "required_r3_2_boundMatrixReverse"),
        Arguments.of(EmptyValueAsNull.class, "required_r1_5_emptyValueIsNotAbsent"),
        Arguments.of(CursorOutlivesStore.class, "required_r4_3_cursorDiesWithStore"),
        Arguments.of(AckBeforeDurable.class, "required_r7_2_killBufferedKeepsAcknowledgedWrites"),
        Arguments.of(LostConcurrentWrites.class, "required_r8_1_threadsOnDisjointKeys"),
        Arguments.of(LimitIgnored.class, "required_r3_4_limits"),
        Arguments.of(NoLock.class, "required_r10_3_secondOpenIsLocked"),
        Arguments.of(FakeSnapshot.class, "required_r4_5_snapshotCursorSeesNoLaterWrites"),
        Arguments.of(AliasedValues.class, "required_r1_7_returnedArraysAreCopies"),
        Arguments.of(CompactDropsEmptyValues.class, "required_r10_10_compactKeepsEveryEntry"),
        Arguments.of(TornOverwrite.class, "required_r7_5_killDuringOverwritesLeavesOldOrNewValue"));
  }

  @ParameterizedTest(name = "{0} is caught by {1}")
  @MethodSource("defects")
  void brokenEngine_isCaughtByItsRule(Class<? extends DefectTck> broken, String ruleMethod) {
    Events caught = run(broken, ruleMethod);
    assertThat(caught.failed().count())
        .as("the kit must FAIL %s on %s (not pass, not skip)", ruleMethod, broken.getSimpleName())
        .isEqualTo(1);
    Events control = run(None.class, ruleMethod);
    assertThat(control.succeeded().count())
        .as("the same rule %s must PASS on the defect-free engine", ruleMethod)
        .isEqualTo(1);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("defects")
  void brokenEngine_failureNamesTheRule(Class<? extends DefectTck> broken, String ruleMethod) {
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
  }

  private static Events run(Class<?> cls, String method) {
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
