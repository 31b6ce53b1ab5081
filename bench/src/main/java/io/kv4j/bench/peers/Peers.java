package io.kv4j.bench.peers;

import io.kv4j.StoreConfig;
import io.kv4j.StoreIOException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.stream.Stream;

/** Directory handling and forcing shared by the peer adapters. */
final class Peers {
  private Peers() {}

  /** Checks or creates the store directory, as {@link StoreConfig#createIfMissing()} says. */
  static Path directory(StoreConfig config, String engine) {
    Path dir = config.path();
    if (dir == null) {
      throw new IllegalArgumentException("engine '" + engine + "' needs a path (a directory)");
    }
    if (Files.isDirectory(dir)) {
      return dir;
    }
    if (Files.exists(dir)) {
      throw new StoreIOException(
          "engine '" + engine + "': " + dir + " is not a directory", (Throwable) null);
    }
    if (!config.createIfMissing() || config.readOnly()) {
      throw new StoreIOException(
          "engine '" + engine + "': directory " + dir + " does not exist", (Throwable) null);
    }
    try {
      return Files.createDirectories(dir);
    } catch (IOException e) {
      throw new StoreIOException("engine '" + engine + "': cannot create " + dir, e);
    }
  }

  /**
   * fsyncs every regular file in a directory. On Linux this also writes back pages dirtied through
   * a shared memory mapping, which is how the mmap-based peers make BUFFERED writes durable.
   */
  static void forceAll(Path dir, String engine) {
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        if (Files.isRegularFile(f)) {
          try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
            ch.force(true);
          }
        }
      }
    } catch (IOException e) {
      throw new StoreIOException("engine '" + engine + "': cannot sync " + dir, e);
    }
  }

  /** Sum of the sizes of the regular files in a directory. */
  static long bytes(Path dir) {
    long sum = 0;
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        if (Files.isRegularFile(f)) {
          sum += Files.size(f);
        }
      }
    } catch (IOException e) {
      return -1;
    }
    return sum;
  }
}
