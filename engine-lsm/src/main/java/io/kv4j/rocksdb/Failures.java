package io.kv4j.rocksdb;

import io.kv4j.StoreClosedException;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.rocksdb.RocksDBException;
import org.rocksdb.Status;

/** RocksDB errors as kv4j exceptions, naming the engine, the directory and the damaged file. */
final class Failures {
  private Failures() {}

  /** A file of the store that a RocksDB message names, such as {@code 000012.sst}. */
  private static final Pattern FILE_IN_MESSAGE =
      Pattern.compile("(\\d{6,}\\.(?:sst|log|blob)|MANIFEST-\\d+|OPTIONS-\\d+|CURRENT)\\b");

  private static final Pattern OFFSET_IN_MESSAGE = Pattern.compile("offset (\\d+)");

  static Path fileIn(Path dir, String message) {
    Matcher m = FILE_IN_MESSAGE.matcher(message);
    return m.find() ? dir.resolve(m.group(1)) : dir;
  }

  /**
   * Maps a RocksDB status: {@code Corruption} to {@link StoreCorruptedException} naming the file
   * (and offset) when the message does, {@code ShutdownInProgress} to {@link StoreClosedException},
   * everything else to {@link StoreIOException}; the native exception is the cause.
   */
  static RuntimeException translate(Path dir, String op, RocksDBException e) {
    Status s = e.getStatus();
    Status.Code code = s == null ? null : s.getCode();
    String m = String.valueOf(e.getMessage());
    String msg = "engine '" + RocksDbProvider.ID + "' at " + dir + ": " + op + " failed: " + m;
    if (code == Status.Code.Corruption) {
      Path file = fileIn(dir, m);
      Matcher off = OFFSET_IN_MESSAGE.matcher(m);
      long offset = !file.equals(dir) && off.find() ? Long.parseLong(off.group(1)) : -1;
      return new StoreCorruptedException(msg, file, offset, e);
    }
    if (code == Status.Code.ShutdownInProgress) {
      return new StoreClosedException(msg);
    }
    return new StoreIOException(msg, e);
  }
}
