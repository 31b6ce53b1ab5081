/**
 * {@code floor}: a bench instrument that measures the least work a hash index over a memory-mapped
 * log can do per get, so that an engine's read rate can be read against a ceiling measured in the
 * same run. One probe of an open-addressing {@code long[]} index, one comparison of the key, one
 * copy of the value out of one mapping: no checksum, no reader guard, no segments, no durability,
 * no deletes. {@code floor-crc} adds a CRC32C of key and value to each record, checked on every get
 * over the value copied out: the ceiling of an engine that verifies what it returns, and, against
 * {@code floor} in the same run, what the check alone costs. Not stores anyone should use:
 * registered only in this module, excluded from the default engine selection, not persistent (so
 * never a pick in the advice).
 *
 * <p>Thread-safety: gets run concurrently with each other and with one put at a time (puts are
 * serialised); puts only append, so a get racing a put returns the old or the new value, whole.
 */
package io.kv4j.bench.floor;
