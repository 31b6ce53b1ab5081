package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;

/** The engine-from-a-property TCK used by {@code kv4j tck} and the bench's conformance matrix. */
class UriTckTest {
  @TempDir Path dir;

  @Test
  void config_uriWithQuery_usesTheRuleDirectoryAndDurability() {
    StoreConfig c = UriTck.config("memory:/ignored", dir, Durability.BUFFERED);
    assertThat(c.engine()).isEqualTo("memory");
    assertThat(c.durability()).isEqualTo(Durability.BUFFERED);
    assertThat(c.path()).isEqualTo(dir);
  }

  @Test
  void config_missingOrUnknownEngine_isRejected() {
    assertThatThrownBy(() -> UriTck.config(null, dir, Durability.SYNC))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(UriTck.PROPERTY);
    assertThatThrownBy(() -> UriTck.config("nosuch:", dir, Durability.SYNC))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("nosuch");
  }

  @Test
  void childJvmOptions_fromAJar_addsEngineFlagsAndExtraOptions() {
    System.setProperty(UriTck.CHILD_JVM_OPTIONS, " -Dkv4j.test.extra=1  --add-exports=a/b=c ");
    try {
      List<String> opts = new UriTck().childJvmOptions();
      assertThat(String.join(" ", opts))
          .contains("java.base/java.nio=ALL-UNNAMED")
          .contains("java.base/sun.nio.ch=ALL-UNNAMED")
          .contains("--enable-native-access");
      assertThat(opts).contains("-Dkv4j.test.extra=1", "--add-exports=a/b=c").doesNotContain("");
    } finally {
      System.clearProperty(UriTck.CHILD_JVM_OPTIONS);
    }
  }

  @Test
  void launcher_memoryEngine_passesAndWritesTheReport() throws Exception {
    Path reports = dir.resolve("reports");
    System.setProperty(UriTck.PROPERTY, "memory:");
    System.setProperty("kv4j.tck.reportDir", reports.toString());
    try {
      Events tests =
          EngineTestKit.engine("junit-jupiter")
              .selectors(selectClass(UriTck.class))
              .execute()
              .testEvents();
      assertThat(tests.started().count()).isGreaterThan(20);
      assertThat(tests.failed().count()).as("failed rules").isZero();
      String json = Files.readString(reports.resolve("UriTck.json"), StandardCharsets.UTF_8);
      assertThat(json).contains("\"engine\": \"memory\"", "\"failed\": 0");
    } finally {
      System.clearProperty(UriTck.PROPERTY);
      System.clearProperty("kv4j.tck.reportDir");
    }
  }
}
