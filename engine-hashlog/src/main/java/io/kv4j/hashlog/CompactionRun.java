package io.kv4j.hashlog;

import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * One compaction run: copies the records of its victims that are still needed into a new segment,
 * puts it in place, moves the index onto the copies, commits, and deletes the victims. The steps,
 * each a crash point ({@link Compactor.Step}), and why the files on disk describe the same contents
 * after each, are in the {@link Compactor} class comment. The victims and the output id were
 * chosen, and claimed, by the {@link Compactor}.
 *
 * <p><b>What a run forces.</b> A victim whose records may have been promised durable ({@link
 * Segment#holdsDurable}: a {@code sync()}, a SYNC write, a forcing seal, or an earlier session)
 * must not be deleted before the copies of its live records are on the disk, the output's directory
 * entry too, and every newer write that made one of its records unnecessary (else a power loss
 * after the deletion would lose a key, or bring back an older value, that {@code sync()} promised).
 * Such a run forces its output and then the log ({@link SegmentLog#sync}) before it commits; always
 * in SYNC. A run whose victims were never forced forces no data: BUFFERED promises only that writes
 * survive the process (kill -9), and the page cache keeps the output through that as it kept the
 * victims. Under heavy overwrites that is nearly every run; forcing each one forced every byte ever
 * written, and the disk's write bandwidth became the ceiling of the update rate. The output is then
 * queued for the next sync. Whether a victim holds durable records is read twice: at the start (to
 * force the output before its rename) and again after the victims are retired and the output
 * queued, which a concurrent sync cannot slip past (see {@link GroupCommit}).
 */
final class CompactionRun {
  private static final int SWITCH_CHUNK = 256;

  private final Compactor compactor;
  private final Segments segments;
  private final Index index;
  private final SegmentLog log;
  private final ReaderGuard guard;
  private final StoreState state;
  private final List<Segment> victims;
  private final Map<Segment, Boolean> dropTombs;
  private final int outId;
  private final Path tmp;
  private final Path target;

  // Filled in while copying.
  private final Moves moves = new Moves(); // copied puts: the index follows them
  private final Moves copies = new Moves(); // every copied record: the scan view follows them
  private final HintFile.Entries hints = new HintFile.Entries();
  private long tombBytes;
  private long outEnd = RecordCodec.FILE_HEADER;
  private Segment out;
  private boolean renamed; // the output is in place: a failure from now on fails the store
  private final boolean keepDurable; // a victim held durable records at the start (class comment)

  /** Growable parallel arrays of relocated records. */
  private static final class Moves {
    long[] hash = new long[256];
    long[] from = new long[256];
    long[] to = new long[256];
    int[] size = new int[256];
    int n;

    void add(long h, long f, long t, int bytes) {
      if (n == hash.length) {
        hash = Arrays.copyOf(hash, n * 2);
        from = Arrays.copyOf(from, n * 2);
        to = Arrays.copyOf(to, n * 2);
        size = Arrays.copyOf(size, n * 2);
      }
      hash[n] = h;
      from[n] = f;
      to[n] = t;
      size[n] = bytes;
      n++;
    }
  }

  /** Thrown inside a copy when the compactor stops: the run ends, nothing changed. */
  private static final class Abort extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Abort() {
      super("compaction stopped", null, false, false);
    }
  }

  CompactionRun(
      Compactor compactor,
      Segments segments,
      Index index,
      SegmentLog log,
      ReaderGuard guard,
      StoreState state,
      List<Segment> victims,
      Map<Segment, Boolean> dropTombs,
      int outId) {
    this.compactor = compactor;
    this.segments = segments;
    this.index = index;
    this.log = log;
    this.guard = guard;
    this.state = state;
    this.victims = victims;
    this.dropTombs = dropTombs;
    this.outId = outId;
    this.tmp = segments.dir.resolve(Segment.fileName(outId) + ".tmp");
    this.target = segments.dir.resolve(Segment.fileName(outId));
    this.keepDurable = log.policy.promisesEveryWrite() || anyHoldsDurable(victims);
  }

  private static boolean anyHoldsDurable(List<Segment> victims) {
    for (Segment v : victims) {
      if (v.holdsDurable) {
        return true;
      }
    }
    return false;
  }

  /** Runs every step; a failure before the output is in place changes nothing. */
  void run() {
    ByteBuffer buffer = compactor.takeBuffer();
    try {
      copy(buffer);
      install();
      renamed = true;
      switchIndex();
      compactor.step(Compactor.Step.INDEX_SWITCHED);
      // Read again now that the victims are retired and the output queued: a sync that forced a
      // victim since the start has set its flag (class comment).
      if (keepDurable || anyHoldsDurable(victims)) {
        if (out != null && !out.forced) {
          out.forceSealed(); // its directory entry was forced at the rename
        }
        // A newer write that made a copy (or a tombstone) unnecessary must be durable before the
        // victim holding the older record disappears.
        log.sync();
      }
      compactor.step(Compactor.Step.WRITES_DURABLE);
      segments.commitCompaction(victims);
      compactor.step(Compactor.Step.MANIFEST_WRITTEN);
      long freed = deleteVictims();
      compactor.ran(out == null ? 0 : out.end, freed);
      guard.bury(victims);
    } catch (Compactor.SimulatedCrash e) {
      state.fail("compaction stopped by a simulated crash", e);
      throw e;
    } catch (Abort e) {
      deleteQuietly(tmp);
    } catch (IOException | UncheckedIOException e) {
      if (!renamed) {
        deleteQuietly(tmp);
        if (out != null) {
          Mappings.unmap(out.map);
        }
        throw new StoreIOException(
            state.describe() + ": compaction failed (nothing changed): " + e, e);
      }
      throw state.fail("compaction failed after its output was in place", e);
    } catch (RuntimeException e) {
      if (!renamed) {
        deleteQuietly(tmp);
      } else {
        state.fail("compaction failed after its output was in place", e);
      }
      throw e;
    } finally {
      compactor.giveBuffer(buffer);
    }
  }

  // ---------------------------------------------------------------- copy

  /** Writes the survivors of every victim to the temporary output and forces it. */
  private void copy(ByteBuffer buf) throws IOException {
    try (Storage.File ch = segments.storage.open(tmp, Storage.Mode.CREATE_NEW)) {
      buf.put(RecordCodec.segmentHeader(outId, 0, true));
      for (Segment v : victims) {
        copyVictim(ch, buf, v);
      }
      buf.flip();
      writeFully(ch, buf);
      compactor.step(Compactor.Step.OUTPUT_WRITTEN);
      if (keepDurable) {
        ch.force();
      }
      compactor.step(Compactor.Step.OUTPUT_SYNCED);
    }
  }

  private void copyVictim(Storage.File ch, ByteBuffer buf, Segment v) {
    boolean drop = dropTombs.get(v);
    ByteBuffer m = v.map;
    Group group = new Group();
    HintFile.Visitor visitor =
        (type, off, k, vl, hintKey) -> {
          if (compactor.stopping()) {
            throw new Abort();
          }
          byte[] key = hintKey;
          if (key == null) {
            key = new byte[k];
            m.get(RecordCodec.keyOffset(off), key, 0, k);
          }
          if (group.add(type, off, key, vl, index.hash(key))) {
            copyGroup(ch, buf, v, drop, group);
          }
        };
    // The hint lists every record's key and place in a few bytes each: walking it instead of the
    // segment skips a cold cache miss per dead record. Without a usable hint, walk the record
    // headers.
    int end =
        HintFile.read(segments.storage, segments.dir, v, visitor) == null
            ? v.end
            : Recovery.walk(
                m,
                RecordCodec.FILE_HEADER,
                v.end,
                (type, off, k, vl) -> visitor.entry(type, off, k, vl, null));
    copyGroup(ch, buf, v, drop, group);
    if (end != v.end) {
      compactor.markUnreadable(v);
      throw new StoreCorruptedException(
          "hashlog: compaction found an invalid record in " + v.path + " at offset " + end,
          v.path,
          end);
    }
  }

  /**
   * A victim's records in log order, gathered {@link #SIZE} at a time so that their index slots are
   * loaded together ({@link Index#warm}) before each is checked.
   */
  private static final class Group {
    static final int SIZE = 32;
    final int[] type = new int[SIZE];
    final int[] off = new int[SIZE];
    final int[] valueLength = new int[SIZE];
    final byte[][] key = new byte[SIZE][];
    final long[] hash = new long[SIZE];
    int n;

    /** Adds a record; returns whether the group is full. */
    boolean add(int t, int o, byte[] k, int vl, long h) {
      type[n] = t;
      off[n] = o;
      key[n] = k;
      valueLength[n] = vl;
      hash[n] = h;
      return ++n == SIZE;
    }
  }

  /** Copies what is needed of a group's records, in order, and empties it. */
  private void copyGroup(Storage.File ch, ByteBuffer buf, Segment v, boolean drop, Group g) {
    index.warm(g.hash, 0, g.n);
    for (int i = 0; i < g.n; i++) {
      copyIfNeeded(ch, buf, v, drop, g.type[i], g.off[i], g.key[i], g.valueLength[i], g.hash[i]);
      g.key[i] = null;
    }
    g.n = 0;
  }

  /**
   * Copies one record of victim {@code v} if it is still needed: a put that is its key's current
   * record, or a tombstone whose key has no put and that an older segment may still need.
   *
   * @param h the key's index hash
   */
  private void copyIfNeeded(
      Storage.File ch,
      ByteBuffer buf,
      Segment v,
      boolean drop,
      int type,
      int off,
      byte[] key,
      int vl,
      long h) {
    long loc = Segments.location(v.id, off);
    boolean copy =
        type == RecordCodec.PUT ? index.isCurrent(h, loc) : !drop && index.locate(h, key) == 0;
    if (!copy) {
      return;
    }
    ByteBuffer m = v.map;
    int k = key.length;
    int size = (int) RecordCodec.recordSize(k, vl);
    if (!RecordCodec.crcMatches(m, off, size)) {
      compactor.markUnreadable(v);
      throw new StoreCorruptedException(
          "hashlog: compaction found a record with a bad checksum in "
              + v.path
              + " at offset "
              + off,
          v.path,
          off);
    }
    try {
      long at = outEnd;
      // The buffer is written only when full, so every write(2) but the last covers one whole
      // chunk at a chunk-aligned offset (see Segment.CHUNK): the output's page cache gets large
      // folios, which readers then map with one TLB entry per chunk.
      ByteBuffer record = m.slice(off, size);
      while (record.hasRemaining()) {
        if (!buf.hasRemaining()) {
          buf.flip();
          writeFully(ch, buf);
          buf.clear();
        }
        int n = Math.min(record.remaining(), buf.remaining());
        int limit = record.limit();
        buf.put(record.limit(record.position() + n));
        record.limit(limit);
      }
      outEnd = at + size;
      hints.add(type, (int) at, key, 0, k, vl);
      if (outEnd > Segments.MAX_SEGMENT) {
        throw new IOException("compaction output exceeds 2 GiB");
      }
      long to = Segments.location(outId, (int) at);
      copies.add(h, loc, to, size);
      if (type == RecordCodec.PUT) {
        moves.add(h, loc, to, size);
      } else {
        tombBytes += size;
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    compactor.pace(size);
  }

  /** Renames the output into place (or drops it when nothing survived) and writes its hint. */
  private void install() throws IOException {
    if (outEnd > RecordCodec.FILE_HEADER) {
      segments.storage.move(tmp, target);
      renamed = true;
      segments.syncDirectory();
      compactor.step(Compactor.Step.OUTPUT_RENAMED);
      out =
          Segment.openSealed(
              segments.storage, outId, target); // forced above, before the rename, or queued
      out.forced = keepDurable;
      out.holdsDurable = keepDurable;
      if (!keepDurable) {
        log.commit.unforced(out);
      }
      out.hintEntries = hints;
      try {
        HintFile.write(segments.storage, segments.dir, out);
      } catch (IOException e) {
        HashLogStore.LOG.log(Level.WARNING, "hashlog: could not write the hint of " + target, e);
      }
      compactor.step(Compactor.Step.HINT_WRITTEN);
    } else {
      segments.storage.deleteIfExists(tmp); // nothing survived: no output file at all
      compactor.step(Compactor.Step.OUTPUT_RENAMED);
      compactor.step(Compactor.Step.HINT_WRITTEN);
    }
  }

  // ---------------------------------------------------------------- switch, commit, delete

  private void switchIndex() {
    segments.writeLock.lock();
    try {
      if (out != null) {
        // Claimed until its live bytes are all accounted: half-switched it would look like garbage
        // and another compaction thread could take it as a victim under the entries still moving.
        out.move(SegmentPhase.COMPACTING);
        segments.install(out);
        out.tombstoneBytes = tombBytes;
      }
    } finally {
      segments.writeLock.unlock();
    }
    // In chunks, each under the writer lock and the sequence lock: writers wait for one chunk at
    // most, and optimistic readers retry briefly rather than fall back to the read lock. Between
    // chunks a writer may supersede a record not yet moved; replace() then leaves its entry alone,
    // and the byte accounting (also under the writer lock) follows whichever record is current.
    for (int from = 0; from < moves.n; from += SWITCH_CHUNK) {
      switchChunk(from, Math.min(moves.n, from + SWITCH_CHUNK));
    }
    segments.writeLock.lock();
    try {
      for (Segment v : victims) {
        v.move(SegmentPhase.RETIRED);
      }
      if (out != null) {
        out.move(SegmentPhase.SEALED);
      }
      // The ordered scan view holds locations in the victims: it follows the copies.
      int[] ids = new int[victims.size()];
      for (int i = 0; i < ids.length; i++) {
        ids[i] = victims.get(i).id;
      }
      index.order.relocated(ids, copies.from, copies.to, copies.n);
    } finally {
      segments.writeLock.unlock();
    }
  }

  private void switchChunk(int from, int to) {
    index.warm(moves.hash, from, to); // outside the lock: writers wait for hits, not misses
    segments.writeLock.lock();
    try {
      long stamp = index.beginUpdate();
      try {
        for (int i = from; i < to; i++) {
          if (index.replace(moves.hash[i], moves.from[i], moves.to[i])) {
            out.liveBytes += moves.size[i];
            segments.at(moves.from[i]).liveBytes -= moves.size[i];
          }
        }
      } finally {
        index.endUpdate(stamp);
      }
    } finally {
      segments.writeLock.unlock();
    }
  }

  /**
   * Deletes the victims' files, oldest first, and forces the directory.
   *
   * @return bytes freed
   */
  private long deleteVictims() throws IOException {
    long freed = 0;
    for (int i = 0; i < victims.size(); i++) {
      Segment v = victims.get(i);
      segments.storage.deleteIfExists(v.path);
      segments.storage.deleteIfExists(HintFile.path(segments.dir, v.id));
      v.move(SegmentPhase.DELETED);
      freed += v.end;
      if (i == 0) {
        compactor.step(Compactor.Step.FIRST_VICTIM_DELETED);
      }
    }
    compactor.step(Compactor.Step.VICTIMS_DELETED);
    segments.syncDirectory();
    segments.deletionsDurable(victims);
    compactor.step(Compactor.Step.DIRECTORY_SYNCED);
    return freed;
  }

  private void deleteQuietly(Path p) {
    try {
      segments.storage.deleteIfExists(p);
    } catch (IOException e) {
      HashLogStore.LOG.log(Level.WARNING, "hashlog: could not delete " + p, e);
    }
  }

  private static void writeFully(Storage.File ch, ByteBuffer b) throws IOException {
    ch.write(b);
  }
}
