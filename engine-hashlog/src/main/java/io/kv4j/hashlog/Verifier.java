package io.kv4j.hashlog;

import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Checks a whole store on request ({@link io.kv4j.Store#verify}): the segment files against the
 * manifest (every listed segment present at its sealed length, the chain of segments rolled since,
 * nothing unexpected), then every segment in full: its header, every record's CRC (batches whole),
 * the records ending exactly at the segment's end, and a valid hint file entry by entry against the
 * records it describes. A damaged or missing hint is not an error: it is only an accelerator,
 * rebuilt at the next read-write open.
 */
final class Verifier {
  private final StoreDirectory directory;
  private final Path dir;
  private final Segments segments;
  private final RecordReader records;
  private final ReaderGuard guard;
  private final StoreState state;
  private final boolean readOnly;

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
   * Verifies everything (see the class comment).
   *
   * @throws StoreCorruptedException naming the first damage found
   */
  void verify() {
    Segment[] segs;
    try {
      segs = checkFiles();
    } catch (IOException e) {
      throw new StoreIOException(state.describe() + ": verify could not read " + dir + ": " + e, e);
    }
    for (Segment g : segs) {
      if (g.retired || g.dropped || g.end < RecordCodec.FILE_HEADER) {
        continue;
      }
      int token = guard.enter();
      try {
        verifySegment(g);
      } catch (StoreCorruptedException e) {
        if (!g.retired) { // compacted away meanwhile: its copies were checked on the way
          throw e;
        }
      } finally {
        guard.exit(token);
      }
    }
  }

  /**
   * The files against the manifest and the installed segments, with no compaction commit and no
   * roll meanwhile.
   *
   * @return the installed segments, to check record by record
   */
  private Segment[] checkFiles() throws IOException {
    synchronized (segments.manifestLock) { // no compaction commits meanwhile
      segments.writeLock.lock(); // no rolls meanwhile
      try {
        Segment[] segs = segments.all().clone();
        Manifest m = Manifest.read(dir);
        if (m != null) {
          Recovery.plan(dir, Recovery.list(dir).segments, m);
        } else if (!readOnly || directory.format() >= 2) {
          throw new StoreCorruptedException(
              "hashlog: the segment manifest " + Manifest.path(dir) + " is missing",
              Manifest.path(dir),
              -1);
        }
        for (Segment g : segs) {
          if (!g.retired && !g.dropped) {
            checkLength(g);
          }
        }
        return segs;
      } finally {
        segments.writeLock.unlock();
      }
    }
  }

  private static void checkLength(Segment g) throws IOException {
    long size;
    try {
      size = Files.size(g.path);
    } catch (NoSuchFileException e) {
      throw new StoreCorruptedException(
          "hashlog: segment file " + g.path + " is missing", g.path, -1);
    }
    if (g.sealed ? size != g.end : size < g.end) {
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

  private void verifySegment(Segment g) {
    Recovery.checkHeader(g);
    int end = g.end;
    List<long[]> found = new ArrayList<>();
    int stop =
        Recovery.scan(
            g.map,
            RecordCodec.FILE_HEADER,
            end,
            (type, off, k, v) -> found.add(new long[] {type, off, k, v}),
            null);
    if (stop != end) {
      throw RecordReader.corrupt(g, stop, "invalid record (bad checksum or header)");
    }
    if (g.sealed) {
      checkHint(g, found);
    }
  }

  /** The hint, if usable, must describe exactly the records found. */
  private void checkHint(Segment g, List<long[]> found) {
    int[] i = {0};
    Path hint = HintFile.path(dir, g.id);
    String unused =
        HintFile.read(
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
