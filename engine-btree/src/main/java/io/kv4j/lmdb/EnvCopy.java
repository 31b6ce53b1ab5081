package io.kv4j.lmdb;

import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.lmdbjava.CopyFlags;
import org.lmdbjava.Env;

/**
 * {@code backup()}: copies the environment with {@code mdb_env_copy2(MDB_CP_COMPACT)}. LMDB walks
 * the trees of one read transaction (the main database and every named database, so every keyspace)
 * and writes their pages renumbered, without free pages, into {@code target/data.mdb}, while
 * writers go on (a compacting copy does not take the writer mutex); it works on read-only stores
 * too. The copy's meta page records exactly the pages written, so it passes the open check ({@link
 * LmdbOpening#checkDataFile}). Then the data file is synced, and the identity file copied beside
 * it, so the copy opens as the same engine and format. The copy runs inside a gate section: the map
 * is not remapped under it (a write needing growth waits for it up to {@code map-growth-timeout})
 * and the store is not closed under it.
 */
final class EnvCopy {
  private EnvCopy() {}

  static void copy(
      Env<byte[]> env, TxnGate gate, String describe, Path dataFile, Path directory, Path target)
      throws IOException {
    int token = gate.enter();
    try {
      env.copy(target.toFile(), CopyFlags.MDB_CP_COMPACT);
    } catch (RuntimeException e) {
      throw Errors.translate(describe + ": backup to " + target, dataFile, e);
    } finally {
      gate.exit(token);
    }
    try (FileChannel ch =
        FileChannel.open(target.resolve(LmdbStore.DATA_FILE), StandardOpenOption.WRITE)) {
      ch.force(true);
    }
    Path identity = directory.resolve(StoreDirectory.IDENTITY_FILE);
    if (Files.exists(identity)) {
      // A read-only store made before identities has none: the copy is then adopted when opened,
      // as the store itself would be.
      Path copied = target.resolve(StoreDirectory.IDENTITY_FILE);
      Files.copy(identity, copied);
      try (FileChannel ch = FileChannel.open(copied, StandardOpenOption.WRITE)) {
        ch.force(true);
      }
    }
  }
}
