/**
 * The {@code sqlite} engine: a store kept in one plain SQLite database file, reached through
 * sqlite-jdbc. Only {@link io.kv4j.sqlite.SqliteProvider} is public.
 *
 * <p>Thread-safety: a store is safe for use from many threads. Point reads run in parallel on a
 * bounded pool of read-only connections (WAL mode lets them proceed while a write commits); writes
 * are serialized on one writer connection. A cursor is a point-in-time snapshot in its own read
 * transaction on its own connection; one cursor is used by one thread at a time.
 *
 * <p>Ordering: keys are BLOBs compared with memcmp, shorter-is-smaller on a common prefix, which is
 * exactly unsigned lexicographic order ({@link java.util.Arrays#compareUnsigned(byte[], byte[])});
 * scans run in that order, ascending or descending.
 */
package io.kv4j.sqlite;
