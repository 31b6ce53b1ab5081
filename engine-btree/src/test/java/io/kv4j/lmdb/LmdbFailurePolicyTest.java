package io.kv4j.lmdb;

import static io.kv4j.lmdb.Lmdb.b;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Store;
import io.kv4j.StoreIOException;
import io.kv4j.WriteBatch;
import io.kv4j.tck.ChildProcess;
import java.lang.reflect.Constructor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lmdbjava.LmdbNativeException;

/** The one failure policy: after an I/O error while writing, writes fail until reopened. */
class LmdbFailurePolicyTest {
  @TempDir Path dir;

  /** The exception lmdbjava throws for an errno LMDB returns (its constructor is not public). */
  private static LmdbNativeException errno(int rc, String msg) throws Exception {
    Constructor<LmdbNativeException> c =
        LmdbNativeException.class.getDeclaredConstructor(int.class, String.class);
    c.setAccessible(true);
    return c.newInstance(rc, msg);
  }

  @Test
  void ioErrorAtCommit_failsWritesUntilReopened_readsGoOn() throws Exception {
    LmdbNativeException enospc = errno(28, "No space left on device");
    AtomicBoolean full = new AtomicBoolean();
    try (Store s = Lmdb.open(dir)) {
      s.put(b("before"), b("v"));
      ((LmdbStore) s)
          .beforeCommit(
              () -> {
                if (full.get()) {
                  throw enospc;
                }
              });
      full.set(true);
      assertThatThrownBy(() -> s.put(b("lost"), b("v")))
          .isInstanceOf(StoreIOException.class)
          .hasMessageContaining("failed until reopened")
          .hasMessageContaining("No space left on device")
          .hasMessageContaining("data.mdb");
      full.set(false); // space freed: the policy still refuses writes until reopened
      assertThatThrownBy(() -> s.put(b("later"), b("v")))
          .isInstanceOf(StoreIOException.class)
          .hasMessageContaining("failed until reopened");
      assertThatThrownBy(() -> s.delete(b("before")))
          .isInstanceOf(StoreIOException.class)
          .hasMessageContaining("failed until reopened");
      WriteBatch batch = new WriteBatch();
      batch.put(b("x"), b("y"));
      assertThatThrownBy(() -> s.write(batch)).isInstanceOf(StoreIOException.class);
      assertThatThrownBy(s::sync).isInstanceOf(StoreIOException.class);
      assertThat(s.get(b("before"))).isEqualTo(b("v"));
      assertThat(s.stats().keyCount()).isEqualTo(1);
      assertThat(s.stats().health()).isEqualTo(io.kv4j.StoreStats.Health.FAILED);
      assertThatThrownBy(s::verify) // the data is intact, but the store is not healthy
          .isInstanceOf(StoreIOException.class)
          .hasMessageContaining("failed until reopened")
          .hasMessageContaining("the data checked is intact");
    }
    try (Store s = Lmdb.open(dir)) {
      assertThat(s.get(b("before"))).isEqualTo(b("v"));
      assertThat(s.get(b("lost"))).isNull();
      s.put(b("later"), b("v"));
      assertThat(s.get(b("later"))).isEqualTo(b("v"));
    }
  }

  @Test
  void transientIoError_isNotRetriedAway_theStoreStaysFailed() throws Exception {
    LmdbNativeException eio = errno(5, "Input/output error");
    AtomicBoolean once = new AtomicBoolean(true);
    try (Store s = Lmdb.open(dir)) {
      ((LmdbStore) s)
          .beforeCommit(
              () -> {
                if (once.getAndSet(false)) {
                  throw eio;
                }
              });
      // The error hits the group commit once; its retry must not paper over it.
      assertThatThrownBy(() -> s.put(b("k"), b("v")))
          .isInstanceOf(StoreIOException.class)
          .hasMessageContaining("failed until reopened")
          .hasMessageContaining("Input/output error");
      assertThat(once).isFalse();
      assertThatThrownBy(() -> s.put(b("k"), b("v")))
          .isInstanceOf(StoreIOException.class)
          .hasMessageContaining("failed until reopened");
      assertThat(s.get(b("k"))).isNull();
    }
  }

  /**
   * A real write error: the child JVM runs under {@code ulimit -f} (the JVM ignores SIGXFSZ, so a
   * write past the limit fails with EFBIG, as a full disk fails with ENOSPC). Every put that
   * returned is on disk after reopening, and the store refused writes after the first failure.
   */
  @Test
  void fileSizeLimitInAChildJvm_failsWritesUntilReopened_andLosesNothingAcknowledged()
      throws Exception {
    Path store = dir.resolve("store");
    int acked = -1;
    try (ChildProcess c =
        ChildProcess.java(LmdbChildMain.class, "fill", store.toString())
            .jvmOptions("-Xmx128m", "-XX:-UsePerfData")
            .prefix(List.of("bash", "-c", "ulimit -f 4096 && exec \"$@\"", "bash"))
            .start()) {
      c.assertSucceeded(Duration.ofMinutes(5));
      String out = c.stdout();
      for (String line : c.stdoutLines()) {
        if (line.startsWith("ACKED ")) {
          acked = Integer.parseInt(line.substring(6).trim());
        }
      }
      assertThat(acked).as(c.describe()).isGreaterThan(10);
      assertThat(out)
          .as(c.describe())
          .contains("AFTER io.kv4j.StoreIOException")
          .contains("SYNC io.kv4j.StoreIOException")
          .contains("failed until reopened")
          .contains("READ 4096")
          .contains("CLOSED");
    }
    assertThat(Files.size(store.resolve("data.mdb"))).isLessThanOrEqualTo(4096L << 10);
    try (Store s = Lmdb.open(store)) {
      for (int i = 0; i <= acked; i++) {
        assertThat(s.get(b("key" + i))).as("acknowledged key%d", i).hasSize(4096);
      }
      s.verify();
    }
  }
}
