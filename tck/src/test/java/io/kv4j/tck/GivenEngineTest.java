package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.spi.StoreProvider;
import io.kv4j.tck.ref.RefProvider;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The kit run against an engine the registry does not hold, child JVMs included. */
class GivenEngineTest {
  @TempDir Path dir;

  private static final TckEnvironment QUICK =
      TckEnvironment.builder().ops(200).manyKeys(2000).stressOps(200).crashRounds(1).build();

  @Test
  void forProvider_engineOutsideTheRegistry_runsRulesAndChildJvmsWithIt() throws Exception {
    StoreProvider unlisted = new RefProvider.Unlisted();
    assertThat(Stores.providers()).noneMatch(p -> p.id().equals("ref-unlisted"));
    assertThatThrownBy(() -> TckRunner.forUri("ref-unlisted:"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown engine 'ref-unlisted'");
    // 1.1 in this JVM; 7.1's crash worker and 10.11's lock probe each in a child JVM, which must
    // open the engine from the provider's class name: the URI alone names no engine there.
    TckRunner.Result r =
        TckRunner.forProvider(unlisted, "ref-unlisted:?defect=none")
            .environment(QUICK)
            .reportDir(dir)
            .rules("1.1", "7.1", "10.11")
            .run();
    assertThat(r.failures()).as("failures").isEmpty();
    assertThat(r.found()).isEqualTo(3);
    assertThat(r.passed()).as("no rule skipped").isEqualTo(3);
    assertThat(Files.readString(dir.resolve("UriTck.json"), StandardCharsets.UTF_8))
        .contains("\"engine\": \"ref-unlisted\"");
    assertThat(System.getProperty(UriTck.PROVIDER)).as("no global state is set").isNull();
  }

  @Test
  void forProvider_defectiveEngineOutsideTheRegistry_failsTheCrashRule() {
    // The child opens the provider with the URI's options: the defect the parent asked for reaches
    // it, so the rule judges the engine it was given (writes acknowledged, then lost to the kill).
    TckRunner.Result r =
        TckRunner.forProvider(new RefProvider.Unlisted(), "ref-unlisted:?defect=ack-before-durable")
            .environment(QUICK)
            .reportDir(dir)
            .rules("7.2")
            .run();
    assertThat(r.failed()).as(String.join("\n", r.failures())).isEqualTo(1);
    assertThat(r.failures())
        .singleElement()
        .asString()
        .as("the child wrote through the defective engine, then lost what it acknowledged")
        .contains("[7.2] acknowledged put", "must survive kill -9", "last ack");
  }

  @Test
  void forProvider_uriOfAnotherEngine_isRefused() {
    assertThatThrownBy(() -> TckRunner.forProvider(new RefProvider.Unlisted(), "memory:"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("names engine 'memory', not 'ref-unlisted'");
  }

  /** A provider the kit could not make in a child JVM is refused before any rule runs. */
  @Test
  void forProvider_withoutPublicNoArgConstructor_isRefused() {
    StoreProvider hidden =
        new RefProvider() {
          @Override
          public String id() {
            return "ref-hidden";
          }
        };
    assertThatThrownBy(() -> TckRunner.forProvider(hidden, "ref-hidden:"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("is no public concrete StoreProvider");
    assertThat(dir.resolve("UriTck.progress")).doesNotExist();
  }

  @Test
  void open_inAChildWithTheProperty_usesTheNamedProvider() {
    String before = System.getProperty(UriTck.PROVIDER);
    System.setProperty(UriTck.PROVIDER, RefProvider.Unlisted.class.getName());
    try (Store s = GivenEngine.open("ref-unlisted:" + dir.resolve("s").toUri().getPath())) {
      assertThat(s.info().engine()).isEqualTo("ref-unlisted");
    } finally {
      if (before == null) {
        System.clearProperty(UriTck.PROVIDER);
      } else {
        System.setProperty(UriTck.PROVIDER, before);
      }
    }
    StoreConfig registered = StoreConfig.parse("memory:");
    assertThat(GivenEngine.childOptions(registered.provider())).isEmpty();
    assertThat(GivenEngine.childOptions(new RefProvider.Unlisted()))
        .containsExactly("-D" + UriTck.PROVIDER + "=" + RefProvider.Unlisted.class.getName());
  }
}
