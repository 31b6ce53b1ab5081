package io.kv4j.sqlite;

/**
 * How read-only connections open the file. {@link #SHARED} takes part in SQLite's WAL locking (it
 * needs the {@code -shm} file, which SQLite creates if the directory is writable), so it may read
 * while a writer writes. {@link #IMMUTABLE} ({@code immutable=1}) takes no lock and reads the
 * database file alone: the only way to read a WAL-mode file in a directory nobody may write
 * (read-only media) when SQLite's side files are absent.
 */
enum ReadMode {
  SHARED,
  IMMUTABLE
}
