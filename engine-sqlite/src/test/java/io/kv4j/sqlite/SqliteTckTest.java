package io.kv4j.sqlite;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.tck.StoreTck;
import java.nio.file.Path;

/** The whole kv4j compatibility kit against the sqlite engine with its default options. */
class SqliteTckTest extends StoreTck {
  @Override
  protected StoreConfig config(Path directory, Durability durability) {
    return StoreConfig.builder("sqlite").path(directory).durability(durability).build();
  }

  /**
   * SQLite's {@code -shm}: the WAL index, where every reader (a read-only one too) writes its read
   * marks and locks (see the README's "Read-only opens"); SQLite rebuilds it from the WAL.
   */
  @Override
  protected boolean isLockFile(String fileName) {
    return fileName.endsWith("-shm");
  }

  /**
   * None to fail: the sqlite engine runs no thread of its own. Its group commit ({@code
   * GroupCommit}) is done by the writers themselves (the writer holding the lock commits the queued
   * writes, and a failure goes to the callers), SQLite's WAL auto-checkpoint runs inside the
   * committing writer's call, and {@code compact()} runs in its caller; so rule 10.15 is skipped.
   */
  @Override
  protected boolean failBackgroundWork(Store store) {
    return false;
  }
}
