package io.kv4j.lmdb;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The part of the memory map that is backed by the data file, so that a read never copies from an
 * address LMDB computed out of damaged bytes: a value outside the map crashes the JVM (SIGSEGV),
 * one inside the map but past the end of the file does too (SIGBUS). The file grows with commits
 * (in this process or, for read-only stores, in another), so a read that falls past the known end
 * first re-reads the file's length.
 */
final class MapBounds {
  private final Path file;
  private volatile long base;
  private volatile long mapSize;
  private volatile long end;
  private volatile boolean enabled;

  MapBounds(Path file) {
    this.file = file;
  }

  /**
   * Finds where the map lies; called at open and after every remap (map growth), when no read runs.
   * LMDB does not tell (its {@code me_mapaddr} is only the fixed address of MDB_FIXEDMAP), so on
   * Linux the map is found in {@code /proc/self/maps} as the mapping of the data file's inode at
   * offset 0. Where that is not available the check is off: every address is accepted.
   *
   * @param mapSize the map's size
   */
  void mapped(long mapSize) {
    long found = locate();
    if (found < 0) {
      this.base = 0;
      this.mapSize = Long.MAX_VALUE;
      this.end = Long.MAX_VALUE;
      this.enabled = false;
      return;
    }
    this.base = found;
    this.mapSize = mapSize;
    this.enabled = true;
    refresh();
  }

  /** Whether addresses are checked (the map was found). */
  boolean enabled() {
    return enabled;
  }

  private long locate() {
    Path maps = Path.of("/proc/self/maps");
    long inode;
    try {
      if (!Files.isReadable(maps)) {
        return -1;
      }
      inode = ((Number) Files.getAttribute(file, "unix:ino")).longValue();
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
      return -1;
    }
    // Lines: start-end perms offset dev inode path
    try (java.io.BufferedReader r = Files.newBufferedReader(maps)) {
      for (String line = r.readLine(); line != null; line = r.readLine()) {
        String[] f = line.trim().split("\\s+", 6);
        if (f.length < 6 || !f[2].matches("0+")) {
          continue;
        }
        long ino;
        try {
          ino = Long.parseLong(f[4]);
        } catch (NumberFormatException e) {
          continue;
        }
        if (ino == inode && f[5].endsWith(file.getFileName().toString())) {
          return Long.parseUnsignedLong(f[0].substring(0, f[0].indexOf('-')), 16);
        }
      }
    } catch (IOException | RuntimeException e) {
      return -1;
    }
    return -1;
  }

  /** Re-reads the file's length (after a commit that may have grown it). */
  void refresh() {
    if (!enabled) {
      return;
    }
    long len;
    try {
      len = Files.size(file);
    } catch (IOException e) {
      len = 0; // the next read outside the known end is reported, not attempted
    }
    end = base + Math.min(len, mapSize);
  }

  /**
   * Whether {@code [address, address + size)} lies in the file-backed part of the map.
   *
   * @param address the start
   * @param size the length
   * @return true if it can be read safely
   */
  boolean covers(long address, long size) {
    if (address >= base && size <= end - address) {
      return true;
    }
    refresh();
    return address >= base && size <= end - address;
  }

  /**
   * The offset in the data file of a map address.
   *
   * @param address an address in the map
   * @return its file offset, or -1 if outside the map
   */
  long offsetOf(long address) {
    long b = base;
    return address >= b && address - b < mapSize ? address - b : -1;
  }

  Path file() {
    return file;
  }
}
