package io.kv4j.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;

/** The bytes a store directory takes on disk, and its removal. */
final class Disk {
  private Disk() {}

  /**
   * Allocated bytes under a directory: {@code du -s -B1} where available (sparse and preallocated
   * files count as allocated blocks), else the sum of file sizes ({@link #apparentBytes}).
   *
   * @param dir the directory
   * @return bytes
   */
  static long allocatedBytes(Path dir) {
    try {
      Process p =
          new ProcessBuilder("du", "-s", "-B1", dir.toString()).redirectErrorStream(true).start();
      String out;
      try (InputStream in = p.getInputStream()) {
        out = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
      }
      if (p.waitFor() == 0) {
        return Long.parseLong(out.split("\\s+")[0]);
      }
    } catch (IOException | NumberFormatException e) {
      // fall through to apparent sizes
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return apparentBytes(dir);
  }

  /**
   * The sum of the sizes of the regular files under a directory (what {@code ls} shows; a file
   * deleted while it is walked counts as 0).
   *
   * @param dir the directory
   * @return bytes
   */
  static long apparentBytes(Path dir) {
    long[] sum = new long[1];
    try {
      Files.walkFileTree(
          dir,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path f, BasicFileAttributes a) {
              if (a.isRegularFile()) {
                sum[0] += a.size();
              }
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path f, IOException e) {
              return FileVisitResult.CONTINUE; // deleted by the engine meanwhile
            }
          });
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return sum[0];
  }

  /**
   * Deletes a directory and everything in it; nothing when it does not exist.
   *
   * @param dir the directory, or null
   */
  static void delete(Path dir) {
    if (dir == null || !Files.exists(dir)) {
      return;
    }
    try {
      Files.walkFileTree(
          dir,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path f, BasicFileAttributes a) throws IOException {
              Files.delete(f);
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
              Files.delete(d);
              return FileVisitResult.CONTINUE;
            }
          });
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete " + dir, e);
    }
  }
}
