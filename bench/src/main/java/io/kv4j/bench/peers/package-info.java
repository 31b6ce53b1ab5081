/**
 * {@link io.kv4j.spi.StoreProvider} adapters for the stores a user would otherwise pick, so the
 * runner and the JMH benchmarks measure them through the same interface as the kv4j engines: MapDB
 * ({@code mapdb}), H2 MVStore ({@code mvstore}) and Chronicle Map ({@code chronicle-map}). Each is
 * configured at its fastest setting that still honours the durability it is opened with; the class
 * comment of each provider states the settings. Stores are thread-safe: reads run in parallel,
 * writes are serialized per store. Keys compare as unsigned bytes where the store has ordered
 * scans.
 */
package io.kv4j.bench.peers;
