package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The process runs out of file descriptors while a store is written (rolls, seals, compaction
 * outputs and directory syncs all open files): the store fails with a {@link
 * io.kv4j.StoreIOException} naming the engine, the directory and the cause, the JVM lives on, and a
 * reopen finds every acknowledged write. The exhaustion happens in a child process ({@link
 * DescriptorExhaustionChild}), which starves everything in it of descriptors.
 */
final class DescriptorExhaustionTest {
  @TempDir Path tmp;

  @ParameterizedTest
  @EnumSource(Durability.class)
  void writes_whenDescriptorsRunOut_failTheStoreCleanly_andKeepEveryAcknowledgedWrite(Durability d)
      throws Exception {
    Path dir = tmp.resolve("store");
    List<String> cmd =
        TestStores.childJava(256, DescriptorExhaustionChild.class, dir.toString(), d.name());
    Process p =
        new ProcessBuilder(cmd)
            .redirectError(ProcessBuilder.Redirect.to(tmp.resolve("child.err").toFile()))
            .start();
    int acked = -1;
    String failure = null;
    try (BufferedReader r =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        if (line.startsWith("acked ")) {
          acked = Integer.parseInt(line.substring(6).trim());
        } else if (line.startsWith("failure ")) {
          failure = line.substring(8);
        }
      }
    } finally {
      assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("child exited").isTrue();
    }
    assertThat(p.exitValue()).as("child exit code (a JVM crash is not 0)").isZero();
    assertThat(acked)
        .as("writes acknowledged before the descriptors ran out")
        .isGreaterThanOrEqualTo(DescriptorExhaustionChild.HOG_AT)
        .isLessThan(DescriptorExhaustionChild.MAX_WRITES);
    assertThat(failure)
        .as("the store's failure")
        .startsWith("io.kv4j.StoreIOException")
        .contains("hashlog", dir.toString(), "Too many open files");
    try (HashLogStore s = TestStores.open(dir, d)) {
      for (int k = 0; k < DescriptorExhaustionChild.KEYS && k < acked; k++) {
        int last =
            k + ((acked - 1 - k) / DescriptorExhaustionChild.KEYS) * DescriptorExhaustionChild.KEYS;
        assertThat(s.get(DescriptorExhaustionChild.key(k)))
            .as("key %d: its last acknowledged write was #%d of %d", k, last, acked)
            .isEqualTo(DescriptorExhaustionChild.value(last));
      }
      s.verify();
      s.put(DescriptorExhaustionChild.key(0), DescriptorExhaustionChild.value(1));
      assertThat(s.get(DescriptorExhaustionChild.key(0)))
          .isEqualTo(DescriptorExhaustionChild.value(1));
    }
  }
}
