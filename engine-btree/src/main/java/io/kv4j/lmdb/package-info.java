/**
 * The {@code lmdb} engine (alias {@code btree}). Only {@link io.kv4j.lmdb.LmdbProvider} is public.
 *
 * <p>Stores are thread-safe: reads run in parallel, each on a pooled LMDB read transaction; writes
 * are serialized (LMDB has one writer), each {@code put}, {@code delete} and batch being one write
 * transaction. Keys are ordered unsigned-lexicographically (LMDB's default {@code memcmp} order).
 * Cursors are point-in-time snapshots (one read transaction each), forward or reverse, and must be
 * used by one thread at a time. Conditional writes join the group commit and compare inside the
 * transaction that commits them; a snapshot is one read transaction held open (usable from any
 * thread, its reads serialized); backups are LMDB's compacting environment copy. Closing the store
 * while other threads use it waits for their native calls to finish and then fails their next call
 * with {@link io.kv4j.StoreClosedException}.
 */
package io.kv4j.lmdb;
