package io.kv4j.rocksdb;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.rocksdb.CompressionType;
import org.rocksdb.EnvOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDBException;
import org.rocksdb.SstFileWriter;

/**
 * A stand-in for a table file RocksDB cannot open (missing, cut short, damaged footer, index or
 * properties), written in a salvage's copy in its place so that the file no longer fails every read
 * of the database: with the file unopenable, RocksDB fails not only the reads of its keys but, in
 * level 0, every iterator and often every point lookup of the column family.
 *
 * <p>The stand-in is a valid table of exactly the size the MANIFEST records (RocksDB checks it)
 * holding one entry, the dead file's smallest key with a filler value. Reads through the database
 * then behave as if the file held nothing else, which is wrong for every key in its range, so
 * salvage never trusts a lookup of a key in a dead file's range unless a newer source holds the key
 * (see {@link Salvage}); outside its range the stand-in changes no answer.
 */
final class StandIn {
  private StandIn() {}

  /**
   * Writes the stand-in over {@code file}.
   *
   * @param file the dead table file, in the copy
   * @param size the size the MANIFEST records for it
   * @param key a key of the dead file's range (its smallest)
   * @return whether a table of exactly {@code size} bytes could be made
   */
  static boolean write(Path file, long size, byte[] key) {
    try {
      long filler = Math.max(0, size - make(file, key, 0));
      for (int attempt = 0; attempt < 8; attempt++) {
        long made = make(file, key, filler);
        if (made == size) {
          return true;
        }
        // The value's length is written as varints in the block and the properties, so a step
        // of one byte can move the size by two: nudge towards the target, then around it.
        long next = filler + (size - made);
        filler = next == filler ? filler + (attempt % 2 == 0 ? 1 : -2) : next;
        if (filler < 0 || filler > Integer.MAX_VALUE - 64) {
          break;
        }
      }
      Files.deleteIfExists(file);
      return false;
    } catch (RocksDBException | IOException e) {
      return false;
    }
  }

  private static long make(Path file, byte[] key, long filler)
      throws RocksDBException, IOException {
    try (Options o = new Options().setCompressionType(CompressionType.NO_COMPRESSION);
        EnvOptions eo = new EnvOptions();
        SstFileWriter w = new SstFileWriter(eo, o)) {
      w.open(file.toString());
      w.put(key, new byte[(int) filler]);
      w.finish();
    }
    return Files.size(file);
  }
}
