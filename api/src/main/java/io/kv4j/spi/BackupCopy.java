package io.kv4j.spi;

import io.kv4j.StoreException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;

/**
 * The frame of every {@link AbstractStore#backup(Path) backup}: the engine writes its copy into a
 * hidden empty directory beside the target, which is renamed into place only when complete, so a
 * target never holds half a store. A copy a killed process left behind is removed by the next
 * backup to the same target.
 */
final class BackupCopy {
  /** The engine's part: write an openable copy into an empty directory. */
  interface Writer {
    void writeInto(Path directory) throws IOException;
  }

  private BackupCopy() {}

  /**
   * Backs a store up to {@code target}.
   *
   * @param info the store's description (for messages and its own location)
   * @param target the caller's target: absent or an empty directory, outside the store
   * @param writer writes the copy
   * @param stillOpen throws if the store closed while the copy was written
   */
  static void run(StoreInfo info, Path target, Writer writer, Runnable stillOpen) {
    Path dest = target.toAbsolutePath().normalize();
    checkTarget(info, dest);
    Path parent = dest.getParent();
    String prefix = "." + dest.getFileName() + ".partial-";
    // The owner's pid is in the name, so a later backup can tell a copy left by a killed process
    // (removed) from one another live process is writing (left alone).
    Path partial =
        parent.resolve(
            prefix
                + ProcessHandle.current().pid()
                + "-"
                + Long.toHexString(ThreadLocalRandom.current().nextLong()));
    boolean done = false;
    try {
      Files.createDirectories(parent);
      removeAbandonedCopies(parent, prefix);
      Files.createDirectory(partial);
      writer.writeInto(partial);
      stillOpen.run();
      StoreDirectory.syncDirectory(partial);
      if (Files.isDirectory(dest)) {
        Files.delete(dest); // empty, checked above; rename(2) could replace it, Files.move cannot
      }
      Files.move(partial, dest, StandardCopyOption.ATOMIC_MOVE);
      StoreDirectory.syncDirectory(parent);
      done = true;
    } catch (IOException | UncheckedIOException e) {
      throw new StoreIOException(
          info.describe() + ": backup to " + dest + " failed: " + e.getMessage(), e);
    } finally {
      if (!done) {
        deleteTree(partial);
      }
    }
  }

  /**
   * Deletes {@code .<target>.partial-<pid>-<random>} directories whose process is gone: what a
   * backup killed mid-copy (kill -9, power loss) leaves beside its target. A name without a pid
   * (not made by this code) and a live process's copy are left alone.
   */
  private static void removeAbandonedCopies(Path parent, String prefix) throws IOException {
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(parent, prefix + "*")) {
      for (Path p : ds) {
        String rest = p.getFileName().toString().substring(prefix.length());
        int dash = rest.indexOf('-');
        long pid;
        try {
          pid = dash > 0 ? Long.parseLong(rest.substring(0, dash)) : -1;
        } catch (NumberFormatException notOurs) {
          continue;
        }
        if (pid > 0 && Files.isDirectory(p) && ProcessHandle.of(pid).isEmpty()) {
          deleteTree(p);
        }
      }
    }
  }

  /**
   * Refuses a target that is, or is inside, the store's own location, or that holds it, by their
   * real paths (symbolic links and {@code ..} resolved; for a path that does not exist yet, the
   * real path of its nearest existing ancestor with the rest appended): a target reached through a
   * link into the store would put the copy inside the live store. Also refuses a target that exists
   * and is not an empty directory.
   */
  private static void checkTarget(StoreInfo info, Path dest) {
    if (!info.location().isEmpty()) {
      Path own;
      try {
        own = Path.of(info.location());
      } catch (RuntimeException notAPath) {
        own = null;
      }
      if (own != null) {
        Path realOwn = realPath(own);
        Path realDest = realPath(dest);
        if (realDest.startsWith(realOwn) || realOwn.startsWith(realDest)) {
          throw new IllegalArgumentException(
              "engine '"
                  + info.engine()
                  + "': backup target "
                  + dest
                  + (realDest.equals(dest) ? "" : " (really " + realDest + ")")
                  + " is, is inside, or holds the store's own location "
                  + info.location()
                  + (realOwn.equals(own) ? "" : " (really " + realOwn + ")")
                  + "; choose a target outside the store");
        }
      }
    }
    if (Files.exists(dest)) {
      boolean empty;
      try (DirectoryStream<Path> ds = Files.newDirectoryStream(dest)) {
        empty = !ds.iterator().hasNext();
      } catch (IOException notADirectory) {
        empty = false;
      }
      if (!empty) {
        throw new IllegalArgumentException(
            "backup target "
                + dest
                + " exists and is not an empty directory ("
                + info.describe()
                + ")");
      }
    }
  }

  /**
   * The real path of {@code p} (absolute, links and {@code ..} resolved); for a path that does not
   * exist (yet), the real path of its nearest existing ancestor with the missing names appended.
   * Falls back to the normalized absolute path where nothing can be resolved.
   */
  private static Path realPath(Path p) {
    Path abs = p.toAbsolutePath();
    java.util.ArrayDeque<Path> missing = new java.util.ArrayDeque<>();
    for (Path at = abs; at != null; at = at.getParent()) {
      try {
        Path real = at.toRealPath();
        for (Path name : missing) {
          real = real.resolve(name);
        }
        return real.normalize();
      } catch (IOException notThere) {
        Path name = at.getFileName();
        if (name != null) {
          missing.addFirst(name);
        }
      }
    }
    return abs.normalize();
  }

  private static void deleteTree(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
        Files.deleteIfExists(p);
      }
    } catch (IOException | UncheckedIOException | StoreException ignored) {
      // Best effort: the partial copy has a hidden name and never a complete store's.
    }
  }
}
