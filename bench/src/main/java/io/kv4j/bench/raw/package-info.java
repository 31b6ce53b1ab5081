/**
 * RocksDB, LMDB and SQLite used directly, without kv4j: the baselines of the "cost of the
 * abstraction" ratio (kv4j engine / raw library, same settings). Each raw store is the minimal
 * correct code a user would write against the library (no argument checks, no directory lock, no
 * guards against use after close), with the settings copied from the kv4j engine. They are bench
 * instruments, not engines: registered only in this module, excluded from the default engine
 * selection, thread-safe for the runner's use (concurrent get/put/scan; a cursor is used by one
 * thread), scans in unsigned key order, forward only.
 */
package io.kv4j.bench.raw;
