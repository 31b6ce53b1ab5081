package io.kv4j.hashlog;

import static io.kv4j.hashlog.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.StoreIOException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A full disk, for real: the store lives on a 4 MiB tmpfs. Readers use memory mappings of the
 * segment files, which are sparse beyond their data, so the engine must meet the full disk in a
 * {@code write(2)} (an {@code IOException}) and never in a store into a mapping (a SIGBUS that
 * would kill the JVM). Needs root to mount; skipped with the reason otherwise.
 */
class DiskFullTest {
  @TempDir Path parent;
  private Path mount;

  @BeforeEach
  void mountSmallFileSystem() throws Exception {
    mount = parent.resolve("small");
    Files.createDirectories(mount);
    String out;
    try {
      out = run("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mount.toString());
    } catch (IOException e) {
      out = e.toString();
    }
    Assumptions.assumeTrue(
        out == null, "cannot mount a 4 MiB tmpfs to fill (needs root and mount(8)): " + out);
  }

  @AfterEach
  void unmount() throws Exception {
    if (mount != null) {
      run("umount", "-l", mount.toString()); // lazy: the temp dir can go even if still busy
    }
  }

  @Test
  void put_onFullDisk_failsTheStoreCleanly_andKeepsWhatWasStored() {
    Path dir = mount.resolve("store");
    List<byte[]> stored = new ArrayList<>();
    try (HashLogStore s = TestStores.open(dir, Durability.BUFFERED, "segment-size", "1MiB")) {
      StoreIOException failure = null;
      for (int i = 0; i < 10_000 && failure == null; i++) {
        byte[] v = new byte[1024];
        v[0] = (byte) i;
        v[1] = (byte) (i >>> 8);
        try {
          s.put(bytes("k" + i), v);
          stored.add(v);
        } catch (StoreIOException e) {
          failure = e;
        }
      }
      assertThat(failure).as("4 MiB cannot hold 10,000 KiB").isNotNull();
      assertThat(failure.getMessage()).contains("hashlog").contains(mount.toString());
      assertThat(stored.size()).as("most of the space was used first").isGreaterThan(1000);
      // Failed until reopened, with a clear error; reads go on and see every stored value.
      assertThatThrownBy(() -> s.put(bytes("after"), new byte[1]))
          .isInstanceOf(StoreIOException.class)
          .hasMessageContaining("failed until reopened");
      for (int i = 0; i < stored.size(); i++) {
        assertThat(s.get(bytes("k" + i))).as("key k%d", i).isEqualTo(stored.get(i));
      }
    }
  }

  /** Runs a command; null when it exited 0, else its output and exit code. */
  private static String run(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return "timed out";
    }
    return p.exitValue() == 0 ? null : out + " (exit " + p.exitValue() + ")";
  }
}
