package io.kv4j.rocksdb;

import io.kv4j.StoreIOException;
import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.stream.Stream;
import org.rocksdb.Checkpoint;
import org.rocksdb.RocksDBException;

/** Backups as RocksDB checkpoints, every column family included. */
final class Checkpoints {
  private Checkpoints() {}

  /**
   * A checkpoint ({@code Checkpoint::CreateCheckpoint}): RocksDB flushes the memtable, pauses file
   * deletions, hard-links the live table files (copies them across file systems) and copies the
   * MANIFEST, {@code CURRENT}, the options file and the live WALs up to their size at that moment,
   * so the copy holds a prefix of the acknowledged writes and opens like a store after a crash (its
   * WAL tail is replayed). RocksDB wants a directory that does not exist yet, so it writes into a
   * child of {@code target} and the files are moved up. The identity file is copied too; the
   * clean-close record is not: it describes this directory's MANIFEST and WALs, not the
   * checkpoint's, and without it the copy's first open checks its logs as after a crash.
   *
   * <p>A read-only database cannot flush, and its checkpoint copies the table files and MANIFEST of
   * its view but not the WAL records it replayed into its memtable (checked with rocksdbjni 11.8.1:
   * a write only in the WAL was missing from the copy, without an error). So a read-only store
   * backs up only while its memtables are empty — its view is then exactly the table files the
   * checkpoint links — and otherwise throws {@link StoreIOException} before writing anything.
   */
  static void backup(RocksDbStore s, Path target) throws IOException {
    Path staging = target.resolve("checkpoint");
    int l = s.enter();
    try (Checkpoint checkpoint = Checkpoint.create(s.db)) {
      if (s.info().readOnly()) {
        long inMemory = 0;
        for (Column c : s.keyspaces.all()) {
          inMemory +=
              s.db.getLongProperty(c.handle, "rocksdb.num-entries-active-mem-table")
                  + s.db.getLongProperty(c.handle, "rocksdb.num-entries-imm-mem-tables");
        }
        if (inMemory > 0) {
          throw new StoreIOException(
              s.info().describe()
                  + ": cannot back up a read-only store whose view holds "
                  + inMemory
                  + " writes replayed from the WAL (a writer has the store open or did not close"
                  + " it cleanly): RocksDB's checkpoint of a read-only database leaves them out."
                  + " Back up through the writer, or open the store read-write once and close it",
              (Throwable) null);
        }
      }
      checkpoint.createCheckpoint(staging.toString());
    } catch (RocksDBException e) {
      throw Failures.translate(s.dir, "backup (checkpoint into " + staging + ")", e);
    } finally {
      s.gate.exit(l);
    }
    List<Path> files;
    try (Stream<Path> listing = Files.list(staging)) {
      files = listing.toList();
    }
    for (Path f : files) {
      Files.move(f, target.resolve(f.getFileName().toString()), StandardCopyOption.ATOMIC_MOVE);
    }
    Files.delete(staging);
    Path identity = s.dir.resolve(StoreDirectory.IDENTITY_FILE);
    if (Files.exists(identity)) {
      // A read-only open of a store made before identity files has none; its copy is adopted.
      StoreDirectory.writeAtomically(
          target.resolve(StoreDirectory.IDENTITY_FILE), Files.readAllBytes(identity));
    }
  }
}
