package io.kv4j.hashlog;

import io.kv4j.DamagedRegion;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;

/**
 * Checks a whole store on request ({@link io.kv4j.Store#verify}): the segment files against the
 * manifest (every listed segment present at its sealed length, the chain of segments rolled since,
 * nothing unexpected), then every segment in full: its header, every record's CRC (batches whole),
 * the records ending exactly at the segment's end, and a valid hint file entry by entry against the
 * records it describes. A damaged or missing hint is not an error: it is only an accelerator,
 * rebuilt at the next read-write open.
 *
 * <p><b>Every damaged region</b> is reported, not just the first: a check goes on past each problem
 * (a segment's invalid records are stepped over to the next valid one, see {@link SegmentScan}),
 * and {@code verify()} throws one {@link StoreCorruptedException} whose {@code damage()} lists them
 * all, its message the first problem's followed by the next few ({@link #check}, {@link #merged}).
 *
 * <p><b>A live store</b>: each segment is checked inside the reader guard (a segment compaction
 * retires meanwhile stays mapped until the check leaves it, and one retired before is skipped), and
 * as it was when the check began: whether it is sealed is read before its end, so a segment sealed
 * while it is checked is checked up to the end read, as the active segment it was, and its hint
 * (which describes the records appended since too) is left to the next {@code verify()}.
 *
 * <p><b>A read-only open</b> has no active segment: its newest segment is judged as recovery judged
 * it at the open ({@link Recovery#checkTail}), never by its length alone. After a crash the file
 * may run past the last valid record (the preallocated zeros of the active segment, a torn last
 * write): not damage, and nothing is written or cut. After a clean close only zeros may follow the
 * recorded end. Its hint, if any, is not used, as recovery does not use it.
 */
final class Verifier {
  private final StoreDirectory directory;
  private final Path dir;
  private final Segments segments;
  private final RecordReader records;
  private final ReaderGuard guard;
  private final StoreState state;
  private final boolean readOnly;

  /**
   * Segments that were active when a check began and whose hint was written before the check ended
   * (the case the hint is left unchecked for); for tests that need the race to have happened.
   */
  private final LongAdder hintsWrittenDuringCheck = new LongAdder();

  Verifier(
      StoreDirectory directory,
      Segments segments,
      RecordReader records,
      ReaderGuard guard,
      StoreState state,
      boolean readOnly) {
    this.directory = directory;
    this.dir = directory.path();
    this.segments = segments;
    this.records = records;
    this.guard = guard;
    this.state = state;
    this.readOnly = readOnly;
  }

  /**
   * Checks everything (see the class comment) and returns every damage found, one exception per
   * damaged region, in the order found: the files against the manifest first, then each segment's
   * header, its invalid stretches (stepped over to the next valid record, {@link SegmentScan}) and
   * its hint. A segment whose file is shorter than its mapping is not read (a read past a file's
   * end through a mapping would crash the JVM).
   *
   * @return the damage found, empty if none
   */
  List<StoreCorruptedException> check() {
    List<StoreCorruptedException> found = new ArrayList<>();
    View view;
    try {
      view = checkFiles(found);
    } catch (IOException e) {
      throw new StoreIOException(state.describe() + ": verify could not read " + dir + ": " + e, e);
    }
    for (Segment g : view.segments) {
      if (view.unread.contains(g)) {
        continue;
      }
      int token = guard.enter(); // first: a segment not retired now stays mapped until exit
      try {
        if (g.isRetired()) {
          continue;
        }
        List<StoreCorruptedException> here = new ArrayList<>();
        try {
          if (g == view.newestReadOnly) {
            verifyNewestReadOnly(g, view.plan);
          } else {
            verifySegment(g, here);
          }
        } catch (StoreCorruptedException e) {
          here.add(e);
        }
        if (!g.isRetired()) { // compacted away meanwhile: its copies were checked on the way
          found.addAll(here);
        }
      } finally {
        guard.exit(token);
      }
    }
    return found;
  }

  /** How many damaged regions after the first a merged message describes. */
  private static final int DESCRIBED = 3;

  /**
   * One exception for every damage found: the first itself when there is one; else one whose {@link
   * StoreCorruptedException#damage()} lists every region, whose message is the first damage's
   * message followed by the next few regions and how many more there are, and whose cause is the
   * first damage.
   */
  static StoreCorruptedException merged(List<StoreCorruptedException> found) {
    if (found.size() == 1) {
      return found.get(0);
    }
    List<DamagedRegion> all = new ArrayList<>();
    for (StoreCorruptedException e : found) {
      all.addAll(e.damage());
    }
    StringBuilder m =
        new StringBuilder(found.get(0).getMessage())
            .append("; and ")
            .append(all.size() - 1)
            .append(" more damaged region")
            .append(all.size() == 2 ? "" : "s")
            .append(": ");
    int shown = Math.min(all.size() - 1, DESCRIBED);
    for (int i = 1; i <= shown; i++) {
      m.append(i > 1 ? "; " : "").append(all.get(i).describe());
    }
    if (all.size() - 1 > shown) {
      m.append("; and ").append(all.size() - 1 - shown).append(" more");
    }
    StoreCorruptedException e = new StoreCorruptedException(m.toString(), all);
    e.initCause(found.get(0));
    return e;
  }

  /**
   * The damage of a keyspace's sub-store, its regions naming the keyspace; message and first region
   * as before.
   */
  static StoreCorruptedException inKeyspace(StoreCorruptedException e, String keyspace) {
    List<DamagedRegion> named = new ArrayList<>();
    for (DamagedRegion d : e.damage()) {
      named.add(
          new DamagedRegion(
              d.file(),
              d.offset(),
              d.length(),
              keyspace,
              d.lostEntries(),
              d.lostKeys(),
              d.problem()));
    }
    StoreCorruptedException k = new StoreCorruptedException(e.getMessage(), named);
    k.initCause(e);
    return k;
  }

  /** {@link #hintsWrittenDuringCheck} so far. */
  long hintsWrittenDuringCheck() {
    return hintsWrittenDuringCheck.sum();
  }

  /**
   * What {@link #checkFiles} found: the installed segments, the plan recovery would make of the
   * files now, and for a read-only open its newest segment (judged as recovery judges it), else
   * null; and the segments not to read, whose files are shorter than their mappings. The plan is
   * null if the manifest or the files it lists are damaged.
   */
  private record View(
      Segment[] segments, Recovery.Plan plan, Segment newestReadOnly, Set<Segment> unread) {}

  /**
   * The files against the manifest and the installed segments, with no compaction commit and no
   * roll meanwhile; what is wrong goes to {@code found}.
   *
   * @return the installed segments, to check record by record
   */
  private View checkFiles(List<StoreCorruptedException> found) throws IOException {
    synchronized (segments.manifestLock) { // no compaction commits meanwhile
      segments.writeLock.lock(); // no rolls meanwhile
      try {
        Segment[] segs = segments.all().clone();
        Recovery.Plan plan = null;
        try {
          Manifest m;
          try {
            m = Manifest.read(segments.storage, dir);
          } catch (IOException e) {
            throw Recovery.reading(Manifest.path(dir), e);
          }
          if (m == null && (!readOnly || directory.format() >= 2)) {
            throw new StoreCorruptedException(
                "hashlog: the segment manifest " + Manifest.path(dir) + " is missing",
                Manifest.path(dir),
                -1);
          }
          plan =
              Recovery.plan(
                  segments.storage, dir, Recovery.list(segments.storage, dir).segments, m);
        } catch (StoreCorruptedException e) {
          found.add(e); // the segments are still read, each on its own
        }
        // A read-only open installs exactly the segments it loaded, the newest last.
        Segment newest = readOnly && segs.length > 0 ? segs[segs.length - 1] : null;
        Set<Segment> unread = new HashSet<>();
        for (Segment g : segs) {
          if (g.isRetired()) {
            continue;
          }
          try {
            if (g == newest) {
              checkNewestLength(g);
            } else {
              checkLength(g);
            }
          } catch (StoreCorruptedException e) {
            found.add(e);
            unread.add(g);
          }
        }
        return new View(segs, plan, newest, unread);
      } finally {
        segments.writeLock.unlock();
      }
    }
  }

  private long size(Segment g) throws IOException {
    try {
      return segments.storage.size(g.path);
    } catch (NoSuchFileException e) {
      throw new StoreCorruptedException(
          "hashlog: segment file " + g.path + " is missing", g.path, -1);
    } catch (IOException e) {
      throw Recovery.reading(g.path, e);
    }
  }

  /**
   * The newest segment of a read-only open may run past its records (see the class comment), but it
   * must still hold every record the open loaded.
   */
  private void checkNewestLength(Segment g) throws IOException {
    long size = size(g);
    if (size < g.end) {
      throw new StoreCorruptedException(
          "hashlog: segment "
              + g.path
              + " is "
              + size
              + " bytes on disk, but the open found "
              + g.end
              + " bytes of records in it: the file was cut short",
          g.path,
          size);
    }
  }

  private void checkLength(Segment g) throws IOException {
    long size = size(g);
    if (g.isSealed() ? size != g.end : size < g.end) {
      throw new StoreCorruptedException(
          "hashlog: segment "
              + g.path
              + " is "
              + size
              + " bytes on disk, but holds "
              + g.end
              + " bytes of records",
          g.path,
          Math.min(size, g.end));
    }
  }

  private void verifySegment(Segment g, List<StoreCorruptedException> found) {
    // Sealed before its end is read: that end is then final, and the hint, once written, describes
    // exactly the records below it. Still active: a hint written while the records are checked
    // describes more of them than this check reads (see the class comment).
    boolean sealed = g.isSealed();
    int end = g.end;
    if (end < RecordCodec.FILE_HEADER) {
      return; // a segment whose header is still to be written holds no record
    }
    try {
      Recovery.checkHeader(g);
    } catch (StoreCorruptedException e) {
      found.add(e); // the records after it are still checked
    }
    List<long[]> records = new ArrayList<>();
    List<SegmentScan.Stretch> bad =
        SegmentScan.scan(
            g.map,
            RecordCodec.FILE_HEADER,
            end,
            false,
            (type, off, k, v) -> records.add(new long[] {type, off, k, v}));
    for (SegmentScan.Stretch s : bad) {
      found.add(invalid(g, s, end));
    }
    if (!bad.isEmpty()) {
      return; // the hint describes the records the damage took too
    }
    if (sealed) {
      checkHint(g, records);
    } else if (segments.storage.exists(HintFile.path(dir, g.id)) && g.isSealed()) {
      // Sealed and its hint written since the end was read: the hint describes more records than
      // were checked here, so it is left to the next verify. Asked through the storage on every
      // check of an active segment, which is where a test holds verify to seal the segment.
      hintsWrittenDuringCheck.increment();
    }
  }

  /** The damage of a stretch of invalid bytes in a segment. */
  private static StoreCorruptedException invalid(Segment g, SegmentScan.Stretch s, int end) {
    long lost = SegmentScan.countRecords(g.map, s.from(), s.to());
    String what =
        "invalid record (bad checksum or header); "
            + s.length()
            + " bytes up to "
            + (s.to() < end ? "the next valid record at offset " + s.to() : "the segment's end");
    return new StoreCorruptedException(
        "hashlog: corrupt record in " + g.path + " at offset " + s.from() + ": " + what,
        List.of(new DamagedRegion(g.path, s.from(), s.length(), null, lost, null, what)));
  }

  /**
   * The newest segment of a read-only open, judged as recovery judged it at the open: its records
   * up to the end the open found, then its tail ({@link Recovery#checkTail}) over the bytes the
   * open mapped that are still in the file.
   */
  private void verifyNewestReadOnly(Segment g, Recovery.Plan plan) {
    long size;
    try {
      size = size(g);
    } catch (IOException e) {
      throw new StoreIOException(
          state.describe() + ": verify could not read " + g.path + ": " + e, e);
    }
    if (size > g.capacity) {
      throw new StoreCorruptedException(
          "hashlog: segment "
              + g.path
              + " is "
              + size
              + " bytes on disk, but was "
              + g.capacity
              + " bytes when this read-only open read it: it was written to since (by a writer"
              + " opened after this store, or damage); reopen to check it as it is now",
          g.path,
          g.capacity);
    }
    int fileLen = (int) size;
    if (fileLen < g.end) {
      throw RecordReader.corrupt(g, fileLen, "the file was cut short below its records");
    }
    boolean clean = plan != null && plan.clean && g.id == plan.load.get(plan.load.size() - 1);
    if (g.end < RecordCodec.FILE_HEADER) {
      // The open found no header: created just before a crash, nothing of it was ever data.
      if (clean
          || (fileLen >= RecordCodec.FILE_HEADER
              && Recovery.garbageBytes(g.map, 0, RecordCodec.FILE_HEADER) != 0)) {
        throw RecordReader.corrupt(g, 0, "bad segment header");
      }
      return;
    }
    Recovery.checkHeader(g);
    int limit = clean ? Math.min(plan.newestLength, fileLen) : fileLen;
    int[] tornAt = new int[1];
    int validEnd =
        Recovery.scan(g.map, RecordCodec.FILE_HEADER, limit, (type, off, k, v) -> {}, tornAt);
    if (validEnd < g.end) {
      throw RecordReader.corrupt(
          g,
          tornAt[0] >= 0 ? tornAt[0] : validEnd,
          "invalid record (bad checksum or header) below the end of the records the open found ("
              + g.end
              + ")");
    }
    if (validEnd > g.end) {
      throw RecordReader.corrupt(
          g,
          g.end,
          "records past the end the open found (" + g.end + "): the file changed under this open");
    }
    Recovery.checkTail(g, fileLen, clean, limit, validEnd, tornAt[0]);
  }

  /** The hint, if usable, must describe exactly the records found. */
  private void checkHint(Segment g, List<long[]> found) {
    int[] i = {0};
    Path hint = HintFile.path(dir, g.id);
    String unused =
        HintFile.read(
            segments.storage,
            dir,
            g,
            (type, off, k, v, key) -> {
              int at = i[0]++;
              long[] r = at < found.size() ? found.get(at) : null;
              if (r == null
                  || r[0] != type
                  || r[1] != off
                  || r[2] != k
                  || r[3] != v
                  || !records.keyEquals(Segments.location(g.id, off), key, 0)) {
                throw new StoreCorruptedException(
                    "hashlog: hint file "
                        + hint
                        + " entry "
                        + at
                        + " does not match the record "
                        + (r == null ? "count" : "at offset " + r[1])
                        + " of "
                        + g.path,
                    hint,
                    -1);
              }
            });
    if (unused == null && i[0] != found.size()) {
      throw new StoreCorruptedException(
          "hashlog: hint file "
              + hint
              + " lists "
              + i[0]
              + " records, "
              + g.path
              + " holds "
              + found.size(),
          hint,
          -1);
    }
  }
}
