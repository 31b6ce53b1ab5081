package io.kv4j.hashlog;

import io.kv4j.StoreCorruptedException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Rebuilds a store's index when it opens, and decides what the files on disk are allowed to be.
 *
 * <p><b>Which segments</b> ({@link #plan}): with a {@link Manifest}, every segment it lists must
 * exist, sealed ones at their recorded length; unlisted segments must be compaction outputs whose
 * run never committed (left out and deleted: their victims are still listed) or, after a crash,
 * segments rolled since the manifest was written, each naming its predecessor in its header, the
 * first naming the listed active segment. Anything else — a listed segment missing, a gap in the
 * chain, a sealed segment of another length — is a {@link StoreCorruptedException} naming the file.
 * A store of format 1 without a manifest loads whatever segments exist.
 *
 * <p><b>Sealed segments</b> (all but the newest) are loaded from their hint files; a missing or
 * damaged hint is rebuilt by reading the segment, in which every record must be valid: a bad
 * checksum there is corruption. <b>The newest segment</b> is read record by record. After a clean
 * close (the manifest says so) it must hold exactly its recorded length of valid records: any bad
 * record is corruption. Otherwise (a crash) the first invalid record ends the log, but only if no
 * valid record follows it anywhere in the segment: a crash tears only the last write, so a valid
 * record after a bad one means the bad one was damaged, which is corruption, never a torn tail.
 * What a torn tail discards is logged and counted.
 */
final class Recovery {
  static final Pattern SEGMENT = Pattern.compile("seg-([0-9a-f]{8})\\.log");
  static final Pattern HINT = Pattern.compile("seg-([0-9a-f]{8})\\.hint");
  static final Pattern TEMP = Pattern.compile("seg-[0-9a-f]{8}\\.(log|hint)\\.tmp");

  /** Receives each valid put or delete record, in log order. */
  interface Visitor {
    void record(int type, int offset, int keyLength, int valueLength);
  }

  private Recovery() {}

  /** Whether a file name is one of the engine's files (for {@link io.kv4j.spi.StoreDirectory}). */
  static boolean ownsFile(String name) {
    return SEGMENT.matcher(name).matches()
        || HINT.matcher(name).matches()
        || TEMP.matcher(name).matches()
        || name.equals(Manifest.FILE_NAME)
        || name.equals(Manifest.TEMP_NAME)
        || name.equals(Keyspaces.DIR_NAME);
  }

  /** The engine's files in a directory. */
  static final class Listing {
    final List<Integer> segments = new ArrayList<>(); // ascending
    final List<Integer> hints = new ArrayList<>();
    final List<Path> temps = new ArrayList<>();
  }

  /** Lists the directory; changes nothing. */
  static Listing list(Storage storage, Path dir) throws IOException {
    Listing l = new Listing();
    for (Path p : storage.list(dir)) {
      String name = p.getFileName().toString();
      Matcher m = SEGMENT.matcher(name);
      if (m.matches()) {
        l.segments.add(Integer.parseUnsignedInt(m.group(1), 16));
        continue;
      }
      Matcher h = HINT.matcher(name);
      if (h.matches()) {
        l.hints.add(Integer.parseUnsignedInt(h.group(1), 16));
      } else if (TEMP.matcher(name).matches() || name.equals(Manifest.TEMP_NAME)) {
        l.temps.add(p);
      }
    }
    Collections.sort(l.segments);
    return l;
  }

  /** What recovery loads and what a successful read-write open deletes. */
  static final class Plan {
    /** Segment ids to load, ascending; the last is the newest. */
    final List<Integer> load = new ArrayList<>();

    /** Retired segments still present and outputs of uncommitted compaction runs. */
    final List<Integer> leftovers = new ArrayList<>();

    /** The manifest says the store was closed cleanly: the newest segment has no torn tail. */
    boolean clean;

    /** With {@link #clean}: the newest segment's length of valid records. */
    int newestLength = -1;

    /** The predecessor to give the newest segment if its header must be rewritten. */
    int newestPrevious;
  }

  /**
   * Decides which segments make up the store (see the class comment).
   *
   * @param manifest the manifest, or null for a format-1 store without one
   * @throws StoreCorruptedException if a segment is missing, of the wrong length, or not expected
   */
  static Plan plan(Storage storage, Path dir, List<Integer> present, Manifest manifest)
      throws IOException {
    Plan plan = new Plan();
    if (manifest == null) {
      plan.load.addAll(present);
      plan.newestPrevious = present.size() < 2 ? 0 : present.get(present.size() - 2);
      return plan;
    }
    java.util.TreeSet<Integer> rest = new java.util.TreeSet<>(present);
    for (int r : manifest.retired) {
      if (rest.remove(r)) {
        plan.leftovers.add(r);
      }
    }
    java.util.TreeSet<Integer> listed = new java.util.TreeSet<>();
    for (int i = 0; i < manifest.liveIds.length; i++) {
      listed.add(manifest.liveIds[i]);
    }
    listed.add(manifest.active);
    for (int id : listed) {
      checkListed(storage, dir, id, rest.contains(id), manifest);
    }
    rest.removeAll(listed);
    List<Integer> chained = chain(storage, dir, rest, manifest, plan);
    plan.load.addAll(listed);
    plan.load.addAll(chained);
    Collections.sort(plan.load);
    int newest = plan.load.get(plan.load.size() - 1);
    plan.newestPrevious = plan.load.size() < 2 ? 0 : plan.load.get(plan.load.size() - 2);
    plan.clean = manifest.clean && newest == manifest.active;
    if (plan.clean) {
      plan.newestLength = manifest.activeLength;
    }
    return plan;
  }

  /**
   * A segment the manifest lists must be present, a sealed one at its recorded length, the active
   * one after a clean close at least as long as recorded.
   */
  private static void checkListed(
      Storage storage, Path dir, int id, boolean present, Manifest manifest) throws IOException {
    Path mp = Manifest.path(dir);
    Path p = dir.resolve(Segment.fileName(id));
    if (!present) {
      throw new StoreCorruptedException(
          "hashlog: segment file "
              + p
              + " is missing: the manifest "
              + mp
              + " lists it"
              + (id == manifest.active ? " as the active (newest) segment" : "")
              + "; its records are lost (restore the file from a backup)",
          p,
          -1);
    }
    long size;
    try {
      size = storage.size(p);
    } catch (IOException e) {
      throw reading(p, e);
    }
    int want = id == manifest.active ? -1 : manifest.sealedLength(id);
    if (want >= 0 && size != want) {
      throw new StoreCorruptedException(
          "hashlog: sealed segment "
              + p
              + " is "
              + size
              + " bytes, but it was "
              + want
              + " bytes when sealed (manifest "
              + mp
              + "): the file was "
              + (size < want ? "cut short" : "extended")
              + " after it was written",
          p,
          Math.min(size, want));
    }
    if (id == manifest.active && manifest.clean && size < manifest.activeLength) {
      throw new StoreCorruptedException(
          "hashlog: segment "
              + p
              + " is "
              + size
              + " bytes, but the store was closed cleanly with "
              + manifest.activeLength
              + " bytes in it (manifest "
              + mp
              + "): the file was cut short",
          p,
          size);
    }
  }

  /**
   * The segments present but not listed: outputs of uncommitted compaction runs become leftovers;
   * the rest must be segments rolled since the manifest, each naming the one before it.
   *
   * @return the chained segments to load, ascending
   */
  private static List<Integer> chain(
      Storage storage, Path dir, java.util.TreeSet<Integer> rest, Manifest manifest, Plan plan)
      throws IOException {
    Path mp = Manifest.path(dir);
    int chainTop = manifest.active;
    List<Integer> chained = new ArrayList<>();
    for (int id : rest) {
      Path p = dir.resolve(Segment.fileName(id));
      ByteBuffer h;
      try {
        h = readHeader(storage, p);
      } catch (IOException e) {
        throw reading(p, e);
      }
      String bad = RecordCodec.checkFileHeader(h, RecordCodec.SEGMENT_MAGIC, id);
      if (bad == null && RecordCodec.isOutput(h)) {
        plan.leftovers.add(id); // a run that never committed: its victims are still listed
        continue;
      }
      boolean last = id == rest.last();
      boolean headerless = h.limit() < RecordCodec.FILE_HEADER || Recovery.allZero(h);
      if (!manifest.clean && last && headerless && id > chainTop) {
        chained.add(id); // created just before a crash; its header never reached the disk
        continue;
      }
      if (manifest.clean || id < manifest.active) {
        throw new StoreCorruptedException(
            "hashlog: segment file "
                + p
                + " is not listed in the manifest "
                + mp
                + (manifest.clean ? " of a cleanly closed store" : "")
                + "; it does not belong to this store as recorded",
            p,
            -1);
      }
      if (bad != null) {
        throw new StoreCorruptedException(
            "hashlog: segment " + p + " has a bad header: " + bad, p, 0);
      }
      int prev = RecordCodec.previousSegment(h);
      if (prev != chainTop) {
        throw brokenChain(p, prev, chainTop, mp);
      }
      chainTop = id;
      chained.add(id);
    }
    return chained;
  }

  private static StoreCorruptedException brokenChain(Path p, int prev, int chainTop, Path mp) {
    return new StoreCorruptedException(
        "hashlog: segment "
            + p
            + " was created after segment "
            + Segment.fileName(prev)
            + ", but the segment before it is "
            + Segment.fileName(chainTop)
            + ": "
            + (prev > chainTop ? "segment " + Segment.fileName(prev) + " is missing" : "")
            + (prev > chainTop ? "" : "the chain of segments is broken")
            + " (written since the manifest "
            + mp
            + ")",
        p,
        RecordCodec.PREVIOUS_AT);
  }

  /**
   * An I/O failure reading {@code file}, with the file named: a read's {@code EIO} ("Input/output
   * error") names none, and an open refused for it must say which file to look at.
   */
  static IOException reading(Path file, IOException e) {
    return new IOException("cannot read " + file + ": " + e, e);
  }

  /** The first 32 bytes of a file (fewer if it is shorter). */
  static ByteBuffer readHeader(Storage storage, Path p) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(RecordCodec.FILE_HEADER);
    try (Storage.File f = storage.open(p, Storage.Mode.READ)) {
      while (b.hasRemaining() && f.read(b, b.position()) >= 0) {
        // keep reading
      }
    }
    b.flip();
    return b;
  }

  static boolean allZero(ByteBuffer b) {
    for (int i = 0; i < b.limit(); i++) {
      if (b.get(i) != 0) {
        return false;
      }
    }
    return true;
  }

  /**
   * Reads the valid records of a segment from {@code start} up to {@code limit}.
   *
   * @return the offset where the valid log ends
   */
  static int scan(ByteBuffer m, int start, long limit, Visitor v) {
    return scan(m, start, limit, v, null);
  }

  /**
   * Like {@link #scan(ByteBuffer, int, long, Visitor)}; {@code tornAt[0]} receives where the first
   * invalid bytes begin: the returned offset, or, for a batch whose header is valid, its first
   * invalid member (its valid members before that are not evidence of later writes).
   */
  static int scan(ByteBuffer m, int start, long limit, Visitor v, int[] tornAt) {
    if (tornAt != null) {
      tornAt[0] = -1;
    }
    int p = start;
    while (p < limit) {
      long size = RecordCodec.validRecord(m, p, limit);
      if (size < 0) {
        return p;
      }
      int type = RecordCodec.type(m, p);
      if (type == RecordCodec.BATCH) {
        int count = RecordCodec.batchCount(m, p);
        long bytes = RecordCodec.batchBytes(m, p);
        long membersStart = p + size;
        long membersEnd = membersStart + bytes;
        long q = membersStart;
        boolean sane = count >= 1 && bytes >= 0;
        for (int i = 0; sane && i < count; i++) {
          long s =
              q >= Math.min(membersEnd, limit)
                  ? -1
                  : RecordCodec.validRecord(m, (int) q, Math.min(membersEnd, limit));
          if (s < 0 || RecordCodec.type(m, (int) q) == RecordCodec.BATCH) {
            if (tornAt != null) {
              tornAt[0] = (int) Math.min(q, limit);
            }
            return p;
          }
          q += s;
        }
        if (!sane || q != membersEnd || membersEnd > limit) {
          return p;
        }
        for (int r = (int) membersStart; r < membersEnd; ) {
          visit(m, r, v);
          r += (int) RecordCodec.size(m, r);
        }
        p = (int) membersEnd;
      } else {
        visit(m, p, v);
        p += (int) size;
      }
    }
    return p;
  }

  /**
   * Walks the put and delete records of a sealed segment by their headers alone, checking each
   * header's type and lengths but no checksum: compaction checks the CRC of each record it keeps as
   * it copies it, and a dead record needs none. A corrupt length cannot smuggle in a record: a
   * misparsed offset is never an index entry's location, and a walk that does not end exactly at
   * {@code limit} fails the whole segment.
   *
   * @return the offset where the walk stopped ({@code limit} if every header was sane)
   */
  static int walk(ByteBuffer m, int start, int limit, Visitor v) {
    int p = start;
    while (p < limit) {
      long size = RecordCodec.saneRecord(m, p, limit);
      if (size < 0) {
        return p;
      }
      int type = RecordCodec.type(m, p);
      if (type != RecordCodec.BATCH) {
        v.record(type, p, RecordCodec.keyLength(m, p), RecordCodec.valueLength(m, p));
      }
      p += (int) size;
    }
    return p;
  }

  private static void visit(ByteBuffer m, int p, Visitor v) {
    v.record(RecordCodec.type(m, p), p, RecordCodec.keyLength(m, p), RecordCodec.valueLength(m, p));
  }

  static void checkHeader(Segment seg) {
    ByteBuffer h = seg.map.slice(0, Math.min(seg.end, RecordCodec.FILE_HEADER));
    String bad = RecordCodec.checkFileHeader(h, RecordCodec.SEGMENT_MAGIC, seg.id);
    if (bad != null) {
      throw new StoreCorruptedException(
          "hashlog: segment " + seg.path + " has a bad header: " + bad, seg.path, 0);
    }
  }

  /**
   * Decides whether the end of the newest segment's valid records is a torn tail or damage, for an
   * open and for {@code verify()} of a read-only open alike: after a clean close nothing may be
   * invalid and only zeros may follow the recorded end; after a crash no valid record may follow an
   * invalid one (zeros, the preallocated tail, and a torn last write are not damage).
   *
   * @param fileLen the bytes of the segment's mapping to judge
   * @param clean whether the manifest records a clean close with this segment as the newest
   * @param limit where the valid records must end after a clean close, else {@code fileLen}
   * @param validEnd where the valid records end
   * @param tornAt where the first invalid bytes begin inside a batch, or -1
   * @throws StoreCorruptedException for damage; nothing is truncated then
   */
  static void checkTail(
      Segment seg, int fileLen, boolean clean, int limit, int validEnd, int tornAt) {
    Path path = seg.path;
    if (clean) {
      long beyond = garbageBytes(seg.map, limit, fileLen);
      if (validEnd != limit || beyond > 0) {
        // A bad member of a batch is named itself, not the batch's header.
        int at = validEnd != limit ? (tornAt >= 0 ? tornAt : validEnd) : limit;
        throw new StoreCorruptedException(
            "hashlog: invalid record (bad checksum or header) in segment "
                + path
                + " at offset "
                + at
                + (validEnd != limit
                    ? ""
                    : " (" + beyond + " bytes after the end recorded at the clean close)")
                + ": the store was closed cleanly, so this is damage, not a torn write; nothing"
                + " was truncated",
            path,
            at);
      }
      return;
    }
    int from = tornAt >= 0 ? tornAt : validEnd;
    int later = RecordCodec.findValidRecord(seg.map, from + 1, fileLen);
    if (later >= 0) {
      throw new StoreCorruptedException(
          "hashlog: invalid record (bad checksum or header) in segment "
              + path
              + " at offset "
              + from
              + ", followed by a valid record at offset "
              + later
              + ": a crash tears only the last write, so this is damage, not a torn tail;"
              + " nothing was truncated",
          path,
          from);
    }
  }

  /** Bytes in {@code [from, to)} up to and including the last non-zero byte. */
  static long garbageBytes(ByteBuffer m, int from, int to) {
    int p = to;
    while (p - 8 >= from && m.getLong(p - 8) == 0) {
      p -= 8;
    }
    while (p > from && m.get(p - 1) == 0) {
      p--;
    }
    return p - from;
  }
}
