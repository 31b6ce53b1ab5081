package io.kv4j.hashlog;

import io.kv4j.StoreCorruptedException;
import io.kv4j.spi.DirectoryLock;
import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Opening a store: the checks before anything is read (index capacity against the heap, no live
 * writer under a read-only open), then recovery: which segment files make up the store ({@link
 * Recovery#plan}), every sealed segment loaded into the index from its hint or its records, the
 * newest read record by record up to its torn tail (or found damaged), and only once everything
 * checked, the tidying up (leftovers, temporary files, orphan hints, the torn tail) and the
 * manifest that marks the store as open. A failed open changes no file.
 */
final class Opening {
  /** The layout every hashlog directory has, for {@link StoreDirectory}. */
  static final StoreDirectory.Layout LAYOUT =
      new StoreDirectory.Layout("hashlog", 2, Recovery::ownsFile, Set.of());

  private final StoreDirectory directory;
  private final Path dir;
  private final Segments segments;
  private final Index index;
  private final SegmentLog log;
  private final boolean readOnly;
  private final HintReplay.Sizes replaySizes;

  /** Figures of the open, for stats. */
  long truncatedTailBytes;

  int hintsRebuilt;
  int leftoversRemoved;

  Opening(
      StoreDirectory directory,
      Segments segments,
      Index index,
      SegmentLog log,
      boolean readOnly,
      HintReplay.Sizes replaySizes) {
    this.directory = directory;
    this.dir = directory.path();
    this.segments = segments;
    this.index = index;
    this.log = log;
    this.readOnly = readOnly;
    this.replaySizes = replaySizes;
  }

  /** Keys the index was sized for at open from the hints ({@link #presize}), or 0; for stats. */
  long presizedKeys;

  /**
   * Heap bytes the index of {@code initialKeys} takes at once; an open asking for more than the
   * JVM's maximum heap fails with {@link IllegalArgumentException} before allocating anything.
   */
  static void checkIndexCapacity(int initialKeys, long maxHeap) {
    long bytes = KeyDir.initialBytes(initialKeys);
    if (bytes > maxHeap) {
      throw new IllegalArgumentException(
          "hashlog: initial-index-capacity="
              + initialKeys
              + " keys needs "
              + bytes
              + " bytes of heap for the index at once, more than this JVM's maximum heap of "
              + maxHeap
              + " bytes (-Xmx); choose a smaller capacity (the index grows by itself)");
    }
  }

  /** Read-only opens check for a live writer one at a time in this JVM (see refuseLiveWriter). */
  private static final Object READ_ONLY_CHECK = new Object();

  /**
   * A read-only open of a store that a writer holds is refused: the writer appends to the newest
   * segment, and its compaction deletes segments and rewrites the manifest, so what this open would
   * read is not a consistent state of the store. Detected with a shared lock on the lock file,
   * opened for reading only (nothing is created or changed): it fails while a writer, in this JVM
   * or another process, holds its exclusive lock. Nothing keeps a writer from opening the store
   * afterwards; the read-only store then keeps reading the files it mapped at open.
   */
  static void refuseLiveWriter(Path dir) {
    Path lockFile = dir.resolve(DirectoryLock.FILE_NAME);
    if (!Files.exists(lockFile)) {
      return;
    }
    synchronized (READ_ONLY_CHECK) {
      try (FileChannel ch = FileChannel.open(lockFile, StandardOpenOption.READ)) {
        java.nio.channels.FileLock l;
        try {
          l = ch.tryLock(0, Long.MAX_VALUE, true);
        } catch (java.nio.channels.OverlappingFileLockException e) {
          l = null;
        }
        if (l == null) {
          throw new io.kv4j.StoreLockedException(
              "engine 'hashlog': directory "
                  + dir
                  + " is open for writing (in this or another process); a read-only open needs"
                  + " the writer to close first, since the writer changes the files under it",
              dir);
        }
        l.release();
      } catch (java.nio.file.NoSuchFileException e) {
        // Gone meanwhile: no writer.
      } catch (IOException e) {
        // A file system without locks: nothing to detect a writer with.
        HashLogStore.LOG.log(Level.DEBUG, "hashlog: cannot test the lock of " + dir + ": " + e);
      }
    }
  }

  // ---------------------------------------------------------------- recovery

  /** Recovers the store's files into the segments and the index (see the class comment). */
  void recover() throws IOException {
    Storage storage = segments.storage;
    Recovery.Listing files;
    try {
      files = Recovery.list(storage, dir);
    } catch (IOException e) {
      throw Recovery.reading(dir, e);
    }
    List<Integer> ids = files.segments;
    Path mp = Manifest.path(dir);
    Manifest manifest;
    try {
      manifest = Manifest.read(storage, dir);
    } catch (IOException e) {
      throw Recovery.reading(mp, e);
    }
    if (manifest == null && directory.format() >= 2 && !directory.isNew()) {
      throw new StoreCorruptedException(
          "hashlog: the segment manifest "
              + mp
              + " is missing, but the store's identity (format "
              + directory.format()
              + ") says it has one: without it deleted segments cannot be detected; restore it",
          mp,
          -1);
    }
    if (ids.isEmpty() && !directory.isNew()) {
      throw new StoreCorruptedException(
          "hashlog: no segment files in "
              + dir
              + ", but a store was created here (identity or manifest present): every record is"
              + " gone; refusing to start an empty store in its place",
          dir,
          -1);
    }
    Recovery.Plan plan = Recovery.plan(storage, dir, ids, manifest);
    List<Integer> load = plan.load;
    long maxHeap = Runtime.getRuntime().maxMemory();
    long expected = presize(load, maxHeap);
    index.recovering(true);
    replay = new HintReplay(index, segments, expected, maxHeap, replaySizes);
    try {
      loadAll(plan);
    } finally {
      index.recovering(false);
      replay = null;
    }
    if (readOnly) {
      return;
    }
    // Everything checked: now (and only now) tidy up, so that a failed open changes nothing.
    tidyUp(files, plan);
    if (segments.active == null) {
      int id = ids.isEmpty() ? 1 : SegmentLog.nextWriteId(ids.get(ids.size() - 1));
      log.createActive(id, log.segmentSize);
    }
    segments.manifestGeneration(manifest == null ? 0 : manifest.generation);
    segments.writeManifest(false); // from now on the newest segment may have a torn tail
    // A new store's identity, or an adopted (pre-identity, format 1) store's once its files
    // passed recovery; a no-op when the identity is already recorded.
    directory.created();
  }

  /** Sealed segments' hint entries on their way into the index, in slot order; during recovery. */
  private HintReplay replay;

  /** Hint entries replayed into the index at open, for stats and tests. */
  long hintEntriesReplayed;

  /** Loads every segment of the plan into the index, the newest last. */
  private void loadAll(Recovery.Plan plan) throws IOException {
    List<Integer> load = plan.load;
    for (int i = 0; i < load.size(); i++) {
      int id = load.get(i);
      Path path = dir.resolve(Segment.fileName(id));
      try {
        if (i < load.size() - 1) {
          Segment seg = Segment.openSealed(segments.storage, id, path, !readOnly);
          segments.install(seg);
          loadSealed(seg);
        } else {
          replay.flush(); // in log order: the hints' entries before the newest segment's records
          recoverNewest(id, path, plan);
        }
      } catch (IOException e) {
        throw Recovery.reading(path, e); // a hint that cannot be read is rebuilt, not thrown
      }
    }
    replay.finish();
    hintEntriesReplayed = replay.applied;
  }

  /**
   * Sizes the index once for the keys the segments to load will bring, so that loading them does
   * not double the table through every size below (each doubling rehashes every key loaded so far:
   * at 100 million keys that is seconds of work and a second table beside the first). The estimate
   * is the entry count in the header of each sealed segment's hint (a valid header only; the hint
   * itself is checked when it is loaded), and for the newest segment and any sealed one without a
   * usable hint header, its length at the hints' average bytes per entry. It counts every record,
   * so for a store with overwrites or deletes not yet compacted away it is high: the table may then
   * be one doubling larger than the live keys need (at most that: compaction keeps the dead records
   * a fraction of the log). A reservation of more than a quarter of the maximum heap is not made:
   * the table then grows as keys arrive, as before.
   *
   * @return the estimate of entries (whether or not reserved)
   */
  long presize(List<Integer> load, long maxHeap) throws IOException {
    long keys = HintFile.estimateEntries(segments.storage, dir, load);
    if (worthReserving(keys, maxHeap) && index.reserve(keys)) {
      presizedKeys = keys;
    }
    return keys;
  }

  /** Whether a table for {@code keys} keys is worth reserving at once (see {@link #presize}). */
  static boolean worthReserving(long keys, long maxHeap) {
    return keys > 0 && KeyDir.initialBytes(keys) <= maxHeap / 2;
  }

  /** Deletes leftovers of compaction, temporary files and hints of segments not loaded. */
  private void tidyUp(Recovery.Listing files, Recovery.Plan plan) throws IOException {
    for (int id : plan.leftovers) {
      segments.storage.deleteIfExists(dir.resolve(Segment.fileName(id)));
      segments.storage.deleteIfExists(HintFile.path(dir, id));
      leftoversRemoved++;
      HashLogStore.LOG.log(
          Level.INFO,
          "hashlog: removed {0}, compacted away before the last close",
          dir.resolve(Segment.fileName(id)));
    }
    for (Path t : files.temps) {
      segments.storage.deleteIfExists(t);
    }
    Set<Integer> loaded = new HashSet<>(plan.load);
    for (int h : files.hints) {
      if (!loaded.contains(h)) {
        segments.storage.deleteIfExists(HintFile.path(dir, h));
      }
    }
  }

  /** Opens the newest segment, loads its valid records and decides what its tail is. */
  private void recoverNewest(int id, Path path, Recovery.Plan plan) throws IOException {
    long fileLen = segments.storage.size(path);
    if (fileLen > Segments.MAX_SEGMENT) {
      throw new StoreCorruptedException(
          "hashlog: segment " + path + " is larger than 2 GiB", path, Segments.MAX_SEGMENT);
    }
    Segment seg =
        readOnly
            ? Segment.openSealed(segments.storage, id, path)
            : Segment.openActive(
                segments.storage,
                id,
                path,
                (int) Math.max(log.segmentSize, fileLen),
                (int) fileLen);
    segments.install(seg);
    if (!plan.clean
        && (fileLen < RecordCodec.FILE_HEADER
            || Recovery.garbageBytes(seg.map, 0, RecordCodec.FILE_HEADER) == 0)) {
      recreateHeaderless(seg, (int) fileLen, plan);
      return;
    }
    int limit = plan.clean ? plan.newestLength : (int) fileLen;
    int[] tornAt = new int[1];
    int validEnd = loadNewest(seg, limit, tornAt);
    Recovery.checkTail(seg, (int) fileLen, plan.clean, limit, validEnd, tornAt[0]);
    long garbage = Recovery.garbageBytes(seg.map, validEnd, (int) fileLen);
    if (garbage > 0) {
      noteTruncation(seg, validEnd, garbage);
    }
    seg.end = validEnd;
    if (!readOnly) {
      segments.storage.deleteIfExists(HintFile.path(dir, id)); // the newest segment is active again
      seg.truncateTo(validEnd);
      segments.syncDirectory();
      log.resume(seg);
    }
  }

  /**
   * The newest segment after a crash while it was created: nothing was ever written to it. Its
   * header is rewritten in place rather than the file deleted and created: the manifest may list
   * it.
   */
  private void recreateHeaderless(Segment seg, int fileLen, Recovery.Plan plan) throws IOException {
    long garbage = Recovery.garbageBytes(seg.map, 0, fileLen);
    if (garbage > 0) {
      noteTruncation(seg, 0, garbage);
    }
    if (readOnly) {
      seg.end = 0;
      return;
    }
    segments.uninstall(seg);
    seg.closeFile();
    Mappings.unmap(seg.map);
    Segment fresh =
        Segment.create(
            segments.storage, seg.id, seg.path, log.segmentSize, plan.newestPrevious, true);
    segments.install(fresh);
    fresh.hintEntries = new HintFile.Entries();
    log.resume(fresh);
    HashLogStore.LOG.log(Level.INFO, "hashlog: rewrote the header of empty segment {0}", seg.path);
  }

  private void noteTruncation(Segment seg, int at, long garbage) {
    truncatedTailBytes += garbage;
    HashLogStore.LOG.log(
        Level.WARNING,
        "hashlog: torn or garbage tail in newest segment {0}: discarding {1} bytes after offset {2}"
            + " (the end of the last valid record){3}",
        seg.path,
        Long.toString(garbage),
        Integer.toString(at),
        readOnly ? "; read-only, file left unchanged" : "");
  }

  /** Loads a sealed segment into the store from its hint, or from its records. */
  private void loadSealed(Segment seg) throws IOException {
    Recovery.checkHeader(seg);
    String why =
        HintFile.read(
            segments.storage,
            segments.dir,
            seg,
            (type, off, k, v, key) ->
                replay.add(
                    type == RecordCodec.DELETE,
                    key,
                    Segments.location(seg.id, off),
                    RecordCodec.recordSize(k, v)));
    if (why == null) {
      return;
    }
    replay.flush(); // in log order: what came before, then this segment's records
    if (!why.equals("no hint file")) {
      HashLogStore.LOG.log(
          Level.WARNING,
          "hashlog: ignoring hint file of {0} ({1}); rebuilding it from the segment",
          seg.path,
          why);
    }
    int end =
        Recovery.scan(
            seg.map,
            RecordCodec.FILE_HEADER,
            seg.end,
            (type, off, k, v) -> apply(seg, type, off, k, v));
    if (end != seg.end) {
      throw new StoreCorruptedException(
          "hashlog: invalid record (bad checksum or header) in sealed segment "
              + seg.path
              + " at offset "
              + end,
          seg.path,
          end);
    }
    hintsRebuilt++;
    if (!readOnly) {
      try {
        HintFile.write(segments.storage, segments.dir, seg);
      } catch (IOException e) {
        HashLogStore.LOG.log(Level.WARNING, "hashlog: could not write the hint of " + seg.path, e);
      }
    }
  }

  /**
   * Reads the newest segment up to its first invalid record.
   *
   * @return the end of the valid log; bytes after it are garbage or preallocated zeros
   */
  private int loadNewest(Segment seg, int limit, int[] tornAt) {
    Recovery.checkHeader(seg);
    return Recovery.scan(
        seg.map,
        RecordCodec.FILE_HEADER,
        limit,
        (type, off, k, v) -> apply(seg, type, off, k, v),
        tornAt);
  }

  /**
   * Applies one record read from a segment to the index and the byte accounting (hint entries go
   * through {@link HintReplay}). Nothing reads yet: no sequence-lock stamp.
   */
  private void apply(Segment seg, int type, int offset, int keyLen, int valueLen) {
    if (type != RecordCodec.PUT && type != RecordCodec.DELETE) {
      throw new StoreCorruptedException(
          "hashlog: unexpected record type " + type + " in " + seg.path + " at offset " + offset,
          seg.path,
          offset);
    }
    byte[] k = RecordReader.keyAt(seg, offset, keyLen);
    long size = RecordCodec.recordSize(keyLen, valueLen);
    long old = index.apply(type, index.hash(k), k, Segments.location(seg.id, offset), size);
    segments.account(seg, type, size, old);
  }
}
