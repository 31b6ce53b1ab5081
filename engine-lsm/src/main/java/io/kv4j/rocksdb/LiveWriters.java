package io.kv4j.rocksdb;

import io.kv4j.StoreLockedException;
import io.kv4j.spi.DirectoryLock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;

/**
 * Tells whether a process has a store open for writing, without touching the store: a read-write
 * store holds an OS lock on {@code kv4j.lock} ({@link DirectoryLock}) and RocksDB holds one on
 * {@code LOCK}; Linux lists every such lock in {@code /proc/locks} by device and inode.
 *
 * <p>Why not try the lock: taking even a shared lock needs the file opened, and closing any
 * descriptor of a file drops every POSIX lock this process holds on it, so a salvage in the process
 * that has the store open would silently unlock it for everybody else. Reading {@code /proc/locks}
 * opens nothing in the store. Where it does not exist (not Linux) nothing can be told this way and
 * salvage goes ahead; what it reads of a store being written is then a copy taken mid-write.
 */
final class LiveWriters {
  private LiveWriters() {}

  private static final Path LOCKS = Path.of("/proc/locks");

  /**
   * Refuses a store whose lock files a process holds locked.
   *
   * @param dir the store directory (real path)
   * @throws StoreLockedException naming the process, if one holds a lock
   */
  static void refuse(Path dir) {
    long pid = writer(dir);
    if (pid != 0) {
      throw new StoreLockedException(
          "engine '"
              + RocksDbProvider.ID
              + "' at "
              + dir
              + ": the store is open for writing (process "
              + (pid < 0 ? "unknown" : Long.toString(pid))
              + " holds a lock on its "
              + DirectoryLock.FILE_NAME
              + " or LOCK); salvage reads a store nobody writes: close it first",
          dir);
    }
  }

  /**
   * The process that has a store open for writing.
   *
   * @param dir the store directory (real path)
   * @return its process id, -1 if a lock is held by a process the table does not name, 0 if no lock
   *     is held or it cannot be told (no {@code /proc/locks})
   */
  static long writer(Path dir) {
    if (!Files.isReadable(LOCKS)) {
      return 0;
    }
    List<String> table;
    try {
      table = Files.readAllLines(LOCKS);
    } catch (IOException e) {
      return 0; // unreadable: cannot tell
    }
    for (String name : List.of(DirectoryLock.FILE_NAME, "LOCK")) {
      Path f = dir.resolve(name);
      long inode;
      long dev;
      try {
        inode = (Long) Files.getAttribute(f, "unix:ino");
        dev = (Long) Files.getAttribute(f, "unix:dev");
      } catch (NoSuchFileException e) {
        continue;
      } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
        return 0; // no unix attributes: cannot tell
      }
      long pid = holder(table, major(dev), minor(dev), inode);
      if (pid != 0) {
        return pid;
      }
    }
    return 0;
  }

  /**
   * The process holding a lock on the inode, -1 if the table does not say which (an open file
   * description lock), 0 if none. A line of {@code /proc/locks}: {@code "1: POSIX ADVISORY WRITE
   * 4242 fe:00:1234 0 EOF"} ({@code ->} after the number marks a waiter, which holds nothing).
   */
  static long holder(List<String> table, long major, long minor, long inode) {
    for (String line : table) {
      String[] t = line.trim().split("\\s+");
      if (t.length < 6 || t[1].equals("->")) {
        continue;
      }
      String[] id = t[5].split(":");
      if (id.length != 3) {
        continue;
      }
      try {
        if (Long.parseLong(id[0], 16) == major
            && Long.parseLong(id[1], 16) == minor
            && Long.parseLong(id[2]) == inode) {
          long pid = Long.parseLong(t[4]);
          return pid > 0 ? pid : -1;
        }
      } catch (NumberFormatException e) {
        // a line of another shape: not a match
      }
    }
    return 0;
  }

  /** Linux's {@code major()} of a {@code dev_t}. */
  private static long major(long dev) {
    return ((dev >>> 8) & 0xfff) | ((dev >>> 32) & 0xfffff000L);
  }

  /** Linux's {@code minor()} of a {@code dev_t}. */
  private static long minor(long dev) {
    return (dev & 0xff) | ((dev >>> 12) & 0xffffff00L);
  }
}
