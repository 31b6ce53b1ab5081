package io.kv4j;

import java.nio.file.Path;
import java.util.Objects;

/**
 * One damaged region of a store's files, as {@link Store#verify()} and {@link
 * StoreCopy#salvage(StoreConfig, Store, StoreCopy.Options) salvage} report it: where it is, what is
 * wrong, and what it cost, as far as the engine's format can tell.
 *
 * @param file the damaged file (absolute)
 * @param offset the byte offset of the first damaged byte in {@code file}, or -1 if unknown
 * @param length how many bytes the region spans, or -1 if unknown
 * @param keyspace the named keyspace whose entries the region held; null for the store's own keys
 *     or when unknown
 * @param lostEntries how many entries (versions, for a log) the region held that could not be read,
 *     or -1 if unknown
 * @param lostKeys a range holding every key lost in the region, for formats that store keys in
 *     order (the keys of the intact entries on either side); null if unknown
 * @param problem what is wrong, in words (failed checksum, bad page, cut short, ...)
 */
public record DamagedRegion(
    Path file,
    long offset,
    long length,
    String keyspace,
    long lostEntries,
    KeyRange lostKeys,
    String problem) {

  /**
   * Checks the components.
   *
   * @param file the damaged file
   * @param offset the first damaged byte, or -1
   * @param length the bytes spanned, or -1
   * @param keyspace the keyspace, or null
   * @param lostEntries entries lost, or -1
   * @param lostKeys the range of lost keys, or null
   * @param problem what is wrong
   * @throws NullPointerException if {@code file} or {@code problem} is null
   * @throws IllegalArgumentException if a number is below -1
   */
  public DamagedRegion {
    Objects.requireNonNull(file, "file");
    Objects.requireNonNull(problem, "problem");
    if (offset < -1 || length < -1 || lostEntries < -1) {
      throw new IllegalArgumentException(
          "offset, length and lostEntries must be >= -1 (unknown), got "
              + offset
              + ", "
              + length
              + ", "
              + lostEntries);
    }
  }

  /**
   * A region of which only the file and the problem are known.
   *
   * @param file the damaged file
   * @param offset the first damaged byte, or -1
   * @param problem what is wrong
   * @return the region
   */
  public static DamagedRegion at(Path file, long offset, String problem) {
    return new DamagedRegion(file, offset, -1, null, -1, null, problem);
  }

  /**
   * One line for people: file, offset and length, keyspace, what was lost, the problem.
   *
   * @return the description
   */
  public String describe() {
    StringBuilder b = new StringBuilder().append(file);
    if (offset >= 0) {
      b.append(" at byte ").append(offset);
      if (length >= 0) {
        b.append(" (").append(length).append(" bytes)");
      }
    }
    if (keyspace != null) {
      b.append(", keyspace '").append(keyspace).append('\'');
    }
    b.append(": ").append(problem);
    if (lostEntries >= 0) {
      b.append("; ").append(lostEntries).append(lostEntries == 1 ? " entry" : " entries");
      b.append(" lost");
    }
    if (lostKeys != null) {
      b.append(lostEntries >= 0 ? ", " : "; lost ").append("keys in ").append(lostKeys);
    }
    return b.toString();
  }
}
