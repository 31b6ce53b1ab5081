/**
 * The {@code memory} engine. Only {@link io.kv4j.memory.MemoryProvider} is public. Stores are
 * thread-safe (a read-write lock; reads run in parallel); cursors are snapshots.
 */
package io.kv4j.memory;
