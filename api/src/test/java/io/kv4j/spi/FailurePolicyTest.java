package io.kv4j.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Limits;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The one failure policy of {@link AbstractStore#failWrites}: failed until reopened. */
class FailurePolicyTest {
  /** A store whose writes fail with an I/O error while {@code diskFull} is set. */
  private static final class DiskStore extends AbstractStore {
    final Map<String, byte[]> data = new HashMap<>();
    boolean diskFull;

    DiskStore() {
      super(
          new StoreInfo(
              "disk",
              Set.of(Feature.ATOMIC_BATCH),
              new Limits(511, 1 << 24),
              Durability.SYNC,
              "/test",
              false));
    }

    @Override
    protected byte[] doGet(byte[] key) {
      return data.get(new String(key));
    }

    @Override
    protected void doPut(byte[] key, byte[] value) {
      if (diskFull) {
        throw failWrites("append", new IOException("No space left on device"));
      }
      data.put(new String(key), value.clone());
    }

    @Override
    protected void doDelete(byte[] key) {
      data.remove(new String(key));
    }

    @Override
    protected AbstractCursor doScan(KeyRange range) {
      throw new UnsupportedOperationException("no scans");
    }

    @Override
    protected void doWrite(WriteBatch batch) {
      throw new UnsupportedOperationException("not used");
    }

    @Override
    protected void doSync() {}

    @Override
    protected StoreStats doStats() {
      return new StoreStats(data.size(), true, 0, Map.of());
    }

    @Override
    protected void doClose() {}
  }

  @Test
  void failWrites_afterIoError_refusesEveryWriteUntilReopenedButKeepsReads() {
    DiskStore s = new DiskStore();
    s.put(new byte[] {'a'}, new byte[] {1});
    s.diskFull = true;
    assertThatThrownBy(() -> s.put(new byte[] {'b'}, new byte[] {2}))
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining("failed until reopened")
        .hasMessageContaining("No space left on device");
    s.diskFull = false; // space freed: the policy still refuses, reopening recovers
    assertThatThrownBy(() -> s.put(new byte[] {'c'}, new byte[] {3}))
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining("failed until reopened")
        .hasMessageContaining("No space left on device")
        .hasCauseInstanceOf(StoreIOException.class);
    assertThatThrownBy(() -> s.delete(new byte[] {'a'}))
        .hasMessageContaining("failed until reopened");
    assertThatThrownBy(s::sync).hasMessageContaining("failed until reopened");
    assertThatThrownBy(s::compact).hasMessageContaining("failed until reopened");
    assertThatThrownBy(() -> s.write(new WriteBatch().put(new byte[] {'d'}, new byte[0])))
        .hasMessageContaining("failed until reopened");
    assertThat(s.get(new byte[] {'a'})).containsExactly(1);
    assertThat(s.stats().keyCount()).isEqualTo(1);
    assertThat(s.writeFailure()).hasMessageContaining("append");
    s.close();
  }

  @Test
  void stats_healthyStore_isOkWithNoProblem() {
    DiskStore s = new DiskStore();
    assertThat(s.stats().health()).isEqualTo(StoreStats.Health.OK);
    assertThat(s.stats().problem()).isNull();
    s.verify();
  }

  @Test
  void stats_afterWriteFailure_isFailedNamingTheFirstFailure_andVerifySaysSo() {
    DiskStore s = new DiskStore();
    s.diskFull = true;
    assertThatThrownBy(() -> s.put(b("k"), b("v"))).isInstanceOf(StoreIOException.class);
    StoreStats st = s.stats();
    assertThat(st.health()).isEqualTo(StoreStats.Health.FAILED);
    assertThat(st.problem()).contains("failed until reopened", "No space left on device");
    assertThatThrownBy(s::verify)
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining("failed until reopened")
        .hasMessageContaining("not healthy");
  }

  @Test
  void backgroundFailing_degradesUntilRecovered_andVerifySaysWhatFails() {
    DiskStore s = new DiskStore();
    s.backgroundFailing("background compaction", new IOException("No space left on device"));
    StoreStats st = s.stats();
    assertThat(st.health()).isEqualTo(StoreStats.Health.DEGRADED);
    assertThat(st.problem())
        .contains("engine 'disk' at /test", "background compaction fails and is retried")
        .contains("No space left on device");
    assertThatThrownBy(s::verify).hasMessageContaining("background compaction fails");
    s.put(b("k"), b("v")); // a degraded store still takes writes
    s.backgroundRecovered("background compaction");
    assertThat(s.stats().health()).isEqualTo(StoreStats.Health.OK);
    s.verify();
  }

  @Test
  void startBackground_threadThrowsAnError_failsTheStoreNamingTheThread() throws Exception {
    DiskStore s = new DiskStore();
    Thread t =
        s.startBackground(
            "kv4j-test-worker",
            () -> {
              throw new OutOfMemoryError("Java heap space");
            });
    t.join(60_000);
    assertThat(t.isAlive()).isFalse();
    StoreStats st = s.stats();
    assertThat(st.health()).isEqualTo(StoreStats.Health.FAILED);
    assertThat(st.problem()).contains("background thread 'kv4j-test-worker' died", "heap space");
    assertThatThrownBy(() -> s.put(b("k"), b("v")))
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining("failed until reopened");
    assertThat(s.get(b("absent"))).as("reads go on").isNull();
  }

  @Test
  void startBackground_bodyReturns_leavesTheStoreHealthy() throws Exception {
    DiskStore s = new DiskStore();
    Thread t = s.startBackground("kv4j-test-worker", () -> {});
    t.join(60_000);
    assertThat(s.stats().health()).isEqualTo(StoreStats.Health.OK);
  }

  @Test
  void storeStats_problemWithoutHealthOrHealthWithoutProblem_isRefused() {
    assertThatThrownBy(() -> new StoreStats(0, true, 0, Map.of(), StoreStats.Health.OK, "x"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new StoreStats(0, true, 0, Map.of(), StoreStats.Health.FAILED, null))
        .isInstanceOf(IllegalArgumentException.class);
  }

  private static byte[] b(String s) {
    return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }
}
