package io.kv4j.hashlog;

import io.kv4j.StoreCorruptedException;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Rebuilds a store's index when it opens. Sealed segments (all but the newest) are loaded from
 * their hint files; a missing or damaged hint is rebuilt by reading the segment, in which every
 * record must be valid: a bad checksum there is a {@link StoreCorruptedException} naming file and
 * offset. The newest segment is read record by record; the first invalid record (a torn or garbage
 * tail after a crash, or an incomplete batch) ends the log, and what follows is discarded, logged
 * and counted.
 */
final class Recovery {
  static final Pattern SEGMENT = Pattern.compile("seg-([0-9a-f]{8})\\.log");
  static final Pattern HINT = Pattern.compile("seg-([0-9a-f]{8})\\.hint");

  /** Receives each valid put or delete record, in log order. */
  interface Visitor {
    void record(int type, int offset, int keyLength, int valueLength);
  }

  private Recovery() {}

  /** Segment ids present in the directory, ascending; deletes leftover temporary files. */
  static List<Integer> segmentIds(Path dir, boolean readOnly) throws IOException {
    List<Integer> ids = new ArrayList<>();
    List<Integer> hints = new ArrayList<>();
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
      for (Path p : ds) {
        String name = p.getFileName().toString();
        Matcher m = SEGMENT.matcher(name);
        if (m.matches()) {
          ids.add(Integer.parseUnsignedInt(m.group(1), 16));
          continue;
        }
        Matcher h = HINT.matcher(name);
        if (h.matches()) {
          hints.add(Integer.parseUnsignedInt(h.group(1), 16));
        } else if (name.endsWith(".tmp") && !readOnly) {
          Files.deleteIfExists(p);
        }
      }
    }
    Collections.sort(ids);
    if (!readOnly) {
      for (int h : hints) {
        if (Collections.binarySearch(ids, h) < 0) {
          Files.deleteIfExists(HintFile.path(dir, h));
        }
      }
    }
    return ids;
  }

  /**
   * Reads the valid records of a segment from {@code start} up to {@code limit}.
   *
   * @return the offset where the valid log ends
   */
  static int scan(ByteBuffer m, int start, long limit, Visitor v) {
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
        if (count < 1 || bytes < 0 || membersEnd > limit) {
          return p;
        }
        long q = membersStart;
        for (int i = 0; i < count; i++) {
          long s = q >= membersEnd ? -1 : RecordCodec.validRecord(m, (int) q, membersEnd);
          if (s < 0 || RecordCodec.type(m, (int) q) == RecordCodec.BATCH) {
            return p;
          }
          q += s;
        }
        if (q != membersEnd) {
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
      if (p + RecordCodec.RECORD_HEADER > limit) {
        return p;
      }
      int type = RecordCodec.type(m, p);
      int k = RecordCodec.keyLength(m, p);
      long vl = RecordCodec.valueLength(m, p) & 0xFFFFFFFFL;
      boolean sane =
          switch (type) {
            case RecordCodec.PUT ->
                k >= 1 && k <= RecordCodec.MAX_KEY && vl <= RecordCodec.MAX_VALUE;
            case RecordCodec.DELETE -> k >= 1 && k <= RecordCodec.MAX_KEY && vl == 0;
            case RecordCodec.BATCH -> k == 0 && vl == RecordCodec.BATCH_VALUE;
            default -> false;
          };
      long size = RecordCodec.RECORD_HEADER + k + vl;
      if (!sane || p + size > limit) {
        return p;
      }
      if (type != RecordCodec.BATCH) {
        v.record(type, p, k, (int) vl);
      }
      p += (int) size;
    }
    return p;
  }

  private static void visit(ByteBuffer m, int p, Visitor v) {
    v.record(RecordCodec.type(m, p), p, RecordCodec.keyLength(m, p), RecordCodec.valueLength(m, p));
  }

  /** Loads a sealed segment into the store from its hint, or from its records. */
  static void loadSealed(HashLogStore store, Segment seg, boolean readOnly) throws IOException {
    checkHeader(seg);
    String why =
        HintFile.read(
            store.dir, seg, (type, off, k, v, key) -> store.recover(seg, type, off, k, v, key));
    if (why == null) {
      return;
    }
    if (!why.equals("no hint file")) {
      HashLogStore.LOG.log(
          Level.WARNING,
          "hashlog: ignoring hint file of {0} ({1}); rebuilding it from the segment",
          seg.path,
          why);
    }
    int end =
        scan(
            seg.map,
            RecordCodec.FILE_HEADER,
            seg.end,
            (type, off, k, v) -> store.recover(seg, type, off, k, v, null));
    if (end != seg.end) {
      throw new StoreCorruptedException(
          "hashlog: invalid record (bad checksum or header) in sealed segment "
              + seg.path
              + " at offset "
              + end,
          seg.path,
          end);
    }
    store.hintsRebuilt++;
    if (!readOnly) {
      try {
        HintFile.write(store.dir, seg);
      } catch (IOException e) {
        HashLogStore.LOG.log(Level.WARNING, "hashlog: could not write the hint of " + seg.path, e);
      }
    }
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
   * Reads the newest segment up to its first invalid record.
   *
   * @return the end of the valid log; bytes after it are garbage or preallocated zeros
   */
  static int loadNewest(HashLogStore store, Segment seg) {
    checkHeader(seg);
    return scan(
        seg.map,
        RecordCodec.FILE_HEADER,
        seg.end,
        (type, off, k, v) -> store.recover(seg, type, off, k, v, null));
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
