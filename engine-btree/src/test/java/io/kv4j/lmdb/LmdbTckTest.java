package io.kv4j.lmdb;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.tck.StoreTck;
import java.nio.file.Path;

class LmdbTckTest extends StoreTck {
  @Override
  protected StoreConfig config(Path directory, Durability durability) {
    return StoreConfig.builder("lmdb").path(directory).durability(durability).build();
  }

  /**
   * LMDB's {@code lock.mdb}: its reader table, where every open (a read-only one too) takes a
   * reader slot; no data (LMDB rebuilds it when no process has the store open).
   */
  @Override
  protected boolean isLockFile(String fileName) {
    return fileName.equals("lock.mdb");
  }

  /**
   * None to fail: the lmdb engine runs no thread of its own. Its group commit ({@code GroupCommit})
   * is done by the writers themselves (the writer holding the lock commits the queued writes, its
   * own thread's failure goes to the callers), map growth happens in the writer that needs it, and
   * LMDB starts no threads; so rule 10.15 is skipped.
   */
  @Override
  protected boolean failBackgroundWork(Store store) {
    return false;
  }
}
