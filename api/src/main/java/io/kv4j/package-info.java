/**
 * kv4j: one small key-value {@link io.kv4j.Store} interface, with the engine chosen by
 * configuration ({@link io.kv4j.Stores}, {@link io.kv4j.StoreConfig}).
 *
 * <p><b>Ordering.</b> Keys compare as unsigned bytes, lexicographically: 0x00 &lt; 0x7F &lt; 0x80
 * &lt; 0xFF, and a prefix sorts before its extensions. {@link java.util.Arrays#compareUnsigned(
 * byte[], byte[])} gives the same order.
 *
 * <p><b>Thread-safety.</b> {@link io.kv4j.Store} is safe for concurrent use. {@link io.kv4j.Cursor}
 * and {@link io.kv4j.WriteBatch} are used by one thread at a time. {@link io.kv4j.KeyRange}, {@link
 * io.kv4j.StoreConfig}, {@link io.kv4j.StoreInfo} and {@link io.kv4j.StoreStats} are immutable.
 *
 * <p><b>Visibility.</b> A write is visible to every thread once the call returns. A batch becomes
 * visible as a whole on engines with {@link io.kv4j.Feature#ATOMIC_BATCH}.
 */
package io.kv4j;
