/**
 * The {@code hashlog} engine, kv4j's own crash-safe hash-log store. Only {@link
 * io.kv4j.hashlog.HashLogProvider} is public.
 *
 * <p><b>Thread-safety.</b> Stores are safe for concurrent use. Reads take no lock (an optimistic
 * stamp around the index probe, then a copy from a memory-mapped segment); writes are serialised by
 * one writer lock; in SYNC mode concurrent writers share fsyncs (group commit). Background
 * compaction threads (option {@code compaction-threads}) copy live records out of mostly-dead
 * segments concurrently with both; they never block readers (compacted segments are unmapped only
 * after every reader and cursor that could use them is done) and may make writers wait when garbage
 * outruns them.
 *
 * <p><b>Ordering.</b> Scans return keys in unsigned lexicographic order, forward or reverse. A
 * cursor is a point-in-time snapshot: it sees the store as it was when {@code scan} returned, each
 * key at most once.
 */
package io.kv4j.hashlog;
