package io.kv4j.spi;

/**
 * Receives what {@link StoreProvider#salvage(io.kv4j.StoreConfig, SalvageSink)} could read of a
 * damaged store: each key's newest intact value, once per keyspace and key, in no particular order.
 */
@FunctionalInterface
public interface SalvageSink {

  /**
   * One intact entry. The arrays are the sink's to keep.
   *
   * @param keyspace the named keyspace holding the entry, or null for the store's own keys
   * @param key the key
   * @param value the value; its checksum passed where the format has one
   */
  void entry(String keyspace, byte[] key, byte[] value);
}
