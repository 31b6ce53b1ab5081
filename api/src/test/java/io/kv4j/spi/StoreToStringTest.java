package io.kv4j.spi;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Limits;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@link AbstractStore#toString()}: engine and location, then read-only and closed. */
class StoreToStringTest {
  /** A store that does nothing but exist at a location. */
  private static final class PlainStore extends AbstractStore {
    PlainStore(String location, boolean readOnly) {
      super(
          new StoreInfo(
              "plain",
              Set.of(Feature.PERSISTENT),
              new Limits(511, 1 << 24),
              Durability.SYNC,
              location,
              readOnly));
    }

    @Override
    protected byte[] doGet(byte[] key) {
      return null;
    }

    @Override
    protected void doPut(byte[] key, byte[] value) {}

    @Override
    protected void doDelete(byte[] key) {}

    @Override
    protected AbstractCursor doScan(KeyRange range) {
      throw new UnsupportedOperationException("no scans");
    }

    @Override
    protected void doWrite(WriteBatch batch) {}

    @Override
    protected void doSync() {}

    @Override
    protected StoreStats doStats() {
      return new StoreStats(0, true, 0, Map.of());
    }

    @Override
    protected void doClose() {}
  }

  @Test
  void toString_openStore_isEngineColonLocation() {
    try (Store s = new PlainStore("/data/app", false)) {
      assertThat(s).hasToString("plain:/data/app");
    }
  }

  @Test
  void toString_readOnlyThenClosed_saysBoth() {
    Store s = new PlainStore("/data/app", true);
    assertThat(s).hasToString("plain:/data/app (read-only)");
    s.close();
    assertThat(s).hasToString("plain:/data/app (read-only, closed)");
  }

  @Test
  void toString_closedWritableStore_saysClosed() {
    Store s = new PlainStore("/data/app", false);
    s.close();
    assertThat(s).hasToString("plain:/data/app (closed)");
  }

  @Test
  void toString_locationThatIsAlreadyAUri_isNotPrefixedTwice() {
    try (Store s = Stores.open(StoreConfig.builder("memory").build())) {
      assertThat(s).hasToString("memory:");
      try (Store users = s.keyspace("users")) {
        assertThat(users).hasToString("memory:#users");
      }
    }
  }
}
