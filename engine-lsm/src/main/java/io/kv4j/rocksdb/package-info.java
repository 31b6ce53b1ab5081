/**
 * The {@code rocksdb} engine (alias {@code lsm}): RocksDB through rocksdbjni. Only {@link
 * io.kv4j.rocksdb.RocksDbProvider} is public.
 *
 * <p>Thread-safety: stores are fully thread-safe; reads and writes run in parallel (RocksDB's own
 * concurrency), and concurrent synced writers share one log sync (group commit). Every native call
 * runs inside the store's call gate, which {@code close()} closes, so closing a store while other
 * threads use it waits for their calls and then makes further calls throw {@link
 * io.kv4j.StoreClosedException}; it never frees native memory under a running call. Every write
 * takes the lock stripe of its key(s), which orders it with conditional writes and conditional
 * batches. A cursor is used by one thread at a time.
 *
 * <p>Ordering: keys compare as unsigned bytes (RocksDB's bytewise comparator, which {@code
 * rocksdb-options} may not replace). Cursors are native iterators, bounded natively with RocksDB's
 * iterate lower and upper bounds (an exclusive lower bound {@code k} and an inclusive upper bound
 * {@code k} become {@code k+0x00}, the next key in byte order); each sees the store as of the
 * moment it was opened.
 *
 * <p>Dependency footprint: {@code org.rocksdb:rocksdbjni:11.8.1} is one jar of 91,919,284 bytes
 * (about 88 MiB) with no transitive dependencies; it bundles native libraries for Linux (glibc and
 * musl; x86_64, aarch64, ppc64le, s390x, riscv64, x86), macOS and Windows. The Linux x86_64 library
 * alone is 17 MB and is extracted to the temporary directory on first use.
 */
package io.kv4j.rocksdb;
