package io.kv4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The default methods of {@link Store}, on a store that implements the interface directly. */
class StoreDefaultsTest {

  @Test
  void compact_defaultSyncsAndKeepsData() {
    Direct s = new Direct(Stores.open("memory:"));
    s.put(new byte[] {1}, new byte[] {9});
    s.compact();
    assertThat(s.syncs).as("the default compact() calls sync()").isEqualTo(1);
    assertThat(s.get(new byte[] {1})).containsExactly(9);
    s.close();
  }

  @Test
  void compact_defaultRefusesReadOnlyWithoutSyncing() {
    Direct s = new Direct(Stores.open(StoreConfig.builder("memory").readOnly(true).build()));
    assertThatThrownBy(s::compact)
        .isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("engine 'memory'")
        .hasMessageContaining("read-only");
    assertThat(s.syncs).isZero();
    s.close();
  }

  @Test
  void compact_defaultOnClosedStoreIsStoreClosedException() {
    Direct s = new Direct(Stores.open("memory:"));
    s.close();
    assertThatThrownBy(s::compact).isInstanceOf(StoreClosedException.class);
  }

  /** Delegates every abstract method and inherits every default one. */
  private static final class Direct implements Store {
    private final Store inner;
    int syncs;

    Direct(Store inner) {
      this.inner = inner;
    }

    @Override
    public byte[] get(byte[] key) {
      return inner.get(key);
    }

    @Override
    public void put(byte[] key, byte[] value) {
      inner.put(key, value);
    }

    @Override
    public void delete(byte[] key) {
      inner.delete(key);
    }

    @Override
    public Cursor scan(KeyRange range) {
      return inner.scan(range);
    }

    @Override
    public void write(WriteBatch batch) {
      inner.write(batch);
    }

    @Override
    public void sync() {
      inner.sync();
      syncs++;
    }

    @Override
    public StoreInfo info() {
      return inner.info();
    }

    @Override
    public StoreStats stats() {
      return inner.stats();
    }

    @Override
    public void close() {
      inner.close();
    }
  }
}
