package io.kv4j.hashlog;

import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * One online backup: a copy of the store as of one moment, taken while it serves reads and writes.
 *
 * <ol>
 *   <li>Under the writer lock (inside the reader guard), notes what a manifest written now would
 *       list: every sealed segment not committed as compacted, with its length, and the active
 *       segment with its current end. Every write acknowledged before is below that end, every
 *       write after it above. Then the backup {@link ReaderGuard#pin pins} itself before leaving
 *       the guard, so a compaction that retires one of these segments afterwards keeps it mapped
 *       until the backup is done (its file may be deleted meanwhile).
 *   <li>Outside the lock, copies each sealed segment and its hint file into the target with {@link
 *       Files#copy}: files of their own, so that damage to a file of the backup (a flipped bit, a
 *       bad block) never reaches the live store, nor the reverse. (Java 20 and later clone the file
 *       on Linux file systems that can, which shares blocks copy-on-write, never an inode.) With
 *       option {@code backup-hard-links} they are hard-linked instead where the target is on the
 *       same file system: sealed segments and hints are never changed in place (a hint is replaced
 *       by rename, a segment only deleted), but the backup then shares the live store's inodes and
 *       any damage to them. Where the file is gone (compacted away meanwhile), or a link is
 *       impossible, the segment's bytes are copied from its mapping, and a missing hint is left out
 *       (the copy's first open rebuilds it).
 *   <li>Copies the active segment's first {@code end} bytes from its mapping, a megabyte at a time,
 *       each chunk inside the reader guard: a closing store waits for the chunk or refuses the
 *       next, and never unmaps under it.
 *   <li>Writes a clean manifest for the copy (no retired segments, the active one's noted length)
 *       and copies the identity file, then forces every file it wrote or linked.
 * </ol>
 *
 * <p>The copy is therefore exactly the store as a clean close at the noted moment would have left
 * it: it opens with the same options (also read-only) and passes {@code verify()}. The writer lock
 * is held only to note the segment list, never for copying.
 */
final class Backup {
  private static final int CHUNK = 1 << 20;

  private final Path dir;
  private final Segments segments;
  private final ReaderGuard guard;
  private final Compactor compactor;
  private final boolean hardLinks;

  /**
   * A backup of the store in {@code dir}; with {@code hardLinks} (option {@code backup-hard-links})
   * its sealed segments and hints are hard-linked where possible instead of copied.
   */
  Backup(Path dir, Segments segments, ReaderGuard guard, Compactor compactor, boolean hardLinks) {
    this.dir = dir;
    this.segments = segments;
    this.guard = guard;
    this.compactor = compactor;
    this.hardLinks = hardLinks;
  }

  /** Writes the copy into {@code target}, an empty directory. */
  void writeTo(Path target) throws IOException {
    List<Segment> sealed = new ArrayList<>();
    int[] lengths;
    Segment active;
    int activeEnd;
    int token = guard.enter();
    try {
      segments.writeLock.lock();
      try {
        active = segments.active;
        if (active == null) {
          // Read-only: no active segment; the newest installed one is where a writer would go on.
          Segment[] all = segments.all();
          active = all.length == 0 ? null : all[all.length - 1];
        }
        if (active == null) {
          throw new IOException("hashlog: no active segment in " + dir);
        }
        activeEnd = active.end;
        for (Segment g : segments.all()) {
          // The same choice as Segments.writeManifest: what a manifest written now would list.
          if (g != active && !g.isDropped() && g.isSealed() && g.end >= RecordCodec.FILE_HEADER) {
            sealed.add(g);
          }
        }
        lengths = new int[sealed.size()];
        for (int i = 0; i < lengths.length; i++) {
          lengths[i] = sealed.get(i).end;
        }
      } finally {
        segments.writeLock.unlock();
      }
      guard.pin(this);
    } finally {
      guard.exit(token);
    }
    try {
      List<Path> written = new ArrayList<>();
      int[] ids = new int[sealed.size()];
      for (int i = 0; i < ids.length; i++) {
        Segment g = sealed.get(i);
        ids[i] = g.id;
        Path to = target.resolve(Segment.fileName(g.id));
        if (!(hardLinks ? link(g.path, to) : copyIfPresent(g.path, to))) {
          copyMapped(g, lengths[i], to);
        }
        written.add(to);
        Path hint = HintFile.path(dir, g.id);
        Path hintTo = target.resolve(Segment.hintName(g.id));
        if ((hardLinks && link(hint, hintTo)) || copyIfPresent(hint, hintTo)) {
          written.add(hintTo);
        }
      }
      Path activeTo = target.resolve(Segment.fileName(active.id));
      copyMapped(active, activeEnd, activeTo);
      written.add(activeTo);
      for (Path p : written) {
        force(p);
      }
      Path identity = dir.resolve(StoreDirectory.IDENTITY_FILE);
      if (segments.storage.exists(identity)) {
        segments.storage.writeAtomically(
            target.resolve(StoreDirectory.IDENTITY_FILE), segments.storage.readAll(identity));
      }
      // Ids ascending, as the store's own manifest lists them: segments.all() is in id order.
      // Clean: the copy's newest segment ends exactly at its last whole record. Only a newest
      // segment whose header never reached the disk (a read-only store after such a crash) is
      // left to the copy's open to recreate, as a crash image.
      boolean clean = activeEnd >= RecordCodec.FILE_HEADER;
      new Manifest(clean, 1, active.id, activeEnd, ids, lengths, new int[0])
          .write(segments.storage, target);
    } finally {
      compactor.cursorClosed(this);
    }
  }

  /**
   * Hard-links {@code from} as {@code to} (option {@code backup-hard-links}); false if the file is
   * gone or cannot be linked.
   */
  private boolean link(Path from, Path to) throws IOException {
    try {
      segments.storage.createLink(to, from);
      return true;
    } catch (NoSuchFileException | UnsupportedOperationException e) {
      return false;
    } catch (FileSystemException e) {
      // EXDEV (another file system), EPERM (links not allowed), EMLINK: copy instead.
      segments.storage.deleteIfExists(to);
      return false;
    }
  }

  /**
   * Copies a file into a file of its own (a sealed segment or hint, which never changes in place);
   * false if it is gone (compacted away meanwhile).
   */
  private boolean copyIfPresent(Path from, Path to) throws IOException {
    try {
      segments.storage.copy(from, to);
      return true;
    } catch (NoSuchFileException e) {
      segments.storage.deleteIfExists(to);
      return false;
    }
  }

  /**
   * Copies the first {@code length} bytes of a segment from its mapping, which this backup's pin
   * (retired segments) or the store (installed ones) keeps mapped; each chunk inside the reader
   * guard, so that a store closing meanwhile never unmaps under it.
   */
  private void copyMapped(Segment g, int length, Path to) throws IOException {
    try (Storage.File out = segments.storage.open(to, Storage.Mode.CREATE_NEW)) {
      for (int pos = 0; pos < length; ) {
        int n = Math.min(CHUNK, length - pos);
        int token = guard.enter();
        try {
          ByteBuffer src = g.map.duplicate();
          src.limit(pos + n).position(pos);
          out.write(src);
        } finally {
          guard.exit(token);
        }
        pos += n;
      }
    }
  }

  private void force(Path p) throws IOException {
    try (Storage.File f = segments.storage.open(p, Storage.Mode.READ)) {
      f.force();
    }
  }
}
