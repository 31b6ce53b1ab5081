/**
 * kv4j API: the {@link io.kv4j.Store} interface, configuration-driven selection, the engine SPI and
 * the in-memory engine.
 */
module io.kv4j {
  exports io.kv4j;
  exports io.kv4j.spi;

  uses io.kv4j.spi.StoreProvider;

  provides io.kv4j.spi.StoreProvider with
      io.kv4j.memory.MemoryProvider;
}
