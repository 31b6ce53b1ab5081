package io.kv4j.hashlog;

import io.kv4j.DamagedRegion;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import io.kv4j.spi.SalvageSink;
import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

/**
 * Reads every intact record of a damaged store ({@link HashLogProvider#salvage}), where an open
 * refuses it: the store's own directory and each keyspace's, one at a time.
 *
 * <p><b>Which segments.</b> Those recovery would load ({@link Recovery#plan}), without its
 * refusals: with a readable {@link Manifest}, the live segments it lists (a listed one that is
 * missing is a damaged region) and the unlisted ones rolled since it was written; segments it
 * retires (compacted away, their deletion interrupted) and outputs of uncommitted compaction runs
 * (their victims are still listed) are left out, as recovery leaves them out. An unlisted segment
 * that recovery would refuse (after a clean close, or older than the active one, or with a broken
 * predecessor chain) is read all the same and reported. Without a manifest (none, or damaged: a
 * region) every segment file is read and the newest is judged as after a crash.
 *
 * <p><b>Each segment</b> is read record by record through a read-only mapping, every record's
 * CRC32C checked, stepping over damage to the next valid record ({@link SegmentScan}): each stretch
 * stepped over is one {@link DamagedRegion}. The newest segment's tail is judged exactly as
 * recovery judges it ({@link Recovery#checkTail}): after a clean close any invalid record is
 * damage, and so are non-zero bytes past the length recorded at the close; after a crash an invalid
 * tail with no valid record after it is the torn last write or the preallocated zeros, and not
 * damage. A sealed segment's length is checked against the manifest (or its intact hint): the part
 * cut off is a region of its own. A bad segment header is a region, and the records after it are
 * still read.
 *
 * <p><b>Newest wins.</b> Segments are read in id order and records in file order, which is log
 * order (compaction outputs take ids between their victims and every later write; see {@link
 * Compactor}): each record goes into a {@link KeyDir} as recovery applies it (a put points its key
 * at it, a tombstone removes the key), and at the end each key's newest intact put is handed to the
 * sink, its key and value copied out of the mapping and their CRC32C checked again on the copy.
 *
 * <p><b>Hints</b> are not needed: every segment is read in full. An intact hint of a sealed segment
 * tells how many records a damaged region held and which keys they were ({@link
 * DamagedRegion#lostEntries()} and {@link DamagedRegion#lostKeys()}, the smallest and largest lost
 * key); without one, a region's count comes from walking its record headers, where they add up,
 * else it is unknown (-1). A hint that is damaged, or describes another length than its segment was
 * sealed at, is a region of its own that lost nothing.
 *
 * <p><b>Nothing is written.</b> Segments and hints are mapped or read read-only, the lock file is
 * only opened for reading to test for a live writer (refused, as by a read-only open), and the
 * identity and directories are only read.
 */
final class Salvage {
  private final StoreConfig config;
  private final Path dir;
  private final String keyspace;
  private final SalvageSink sink;
  private final Storage storage;
  private final DamageReport report;
  private final KeyDir.Hasher hasher =
      HashLogProvider.seededHasher(new SplittableRandom().nextLong());

  /** Entries handed to the sink, for the log line. */
  private long entries;

  private Salvage(
      StoreConfig config,
      Path dir,
      String keyspace,
      SalvageSink sink,
      List<DamagedRegion> damage,
      Storage storage) {
    this.config = config;
    this.storage = storage;
    this.dir = dir;
    this.keyspace = keyspace;
    this.sink = sink;
    this.report = new DamageReport(damage, keyspace);
  }

  /**
   * Salvages the store at {@code config}'s path and its keyspaces (see the class comment).
   *
   * @return every damaged region found, in the order found
   * @throws io.kv4j.StoreLockedException if a writer has the store open
   * @throws StoreIOException if the directory cannot be read, or holds no store
   * @throws StoreCorruptedException if the directory holds another engine's store or a newer format
   */
  static List<DamagedRegion> run(StoreConfig config, SalvageSink sink) {
    return run(config, sink, Storage.NIO);
  }

  /**
   * As {@link #run(StoreConfig, SalvageSink)}, reading the store's files through {@code storage}.
   */
  static List<DamagedRegion> run(StoreConfig config, SalvageSink sink, Storage storage) {
    Objects.requireNonNull(sink, "sink");
    Path given =
        Objects.requireNonNull(config.path(), "engine 'hashlog' needs a path (a directory)");
    StoreConfig readOnly = config.toBuilder().readOnly(true).createIfMissing(false).build();
    Keyspaces.refuseKeyspaceDirectory(given);
    if (!Files.isDirectory(given)) {
      // Says why in the words of every open: missing, or not a directory.
      StoreDirectory.open(readOnly, Opening.LAYOUT).close();
    }
    Path dir;
    try {
      dir = given.toRealPath();
    } catch (IOException e) {
      throw new StoreIOException(
          "engine 'hashlog': cannot resolve store directory " + given + ": " + e, e);
    }
    Opening.refuseLiveWriter(dir);
    List<DamagedRegion> damage = new ArrayList<>();
    new Salvage(readOnly, dir, null, sink, damage, storage).salvageDirectory();
    Path spaces = dir.resolve(Keyspaces.DIR_NAME);
    if (Files.isDirectory(spaces)) {
      for (Path p : entries(spaces)) {
        String n = p.getFileName().toString();
        if (n.startsWith(Keyspaces.DROPPING)) {
          continue; // dropped (the rename is the drop); a crash interrupted the deletion
        }
        if (Keyspaces.validName(n) && Files.isDirectory(p)) {
          new Salvage(readOnly, p, n, sink, damage, storage).salvageDirectory();
        } else {
          damage.add(
              new DamagedRegion(
                  p,
                  -1,
                  -1,
                  null,
                  -1,
                  null,
                  "not a keyspace (" + spaces + " holds only directories named as keyspaces)"));
        }
      }
    } else if (Files.exists(spaces)) {
      damage.add(new DamagedRegion(spaces, -1, -1, null, -1, null, "not a directory"));
    }
    return damage;
  }

  private static List<Path> entries(Path d) {
    List<Path> out = new ArrayList<>();
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(d)) {
      for (Path p : ds) {
        out.add(p);
      }
    } catch (IOException e) {
      throw new StoreIOException("engine 'hashlog': cannot list " + d + ": " + e, e);
    }
    out.sort(null);
    return out;
  }

  // ---------------------------------------------------------------- one directory

  /** Salvages the store (or keyspace sub-store) in {@link #dir}. */
  private void salvageDirectory() {
    int format = identity();
    if (format < 0) {
      return;
    }
    List<Integer> present;
    try {
      present = Recovery.list(storage, dir).segments;
    } catch (IOException e) {
      if (keyspace == null) {
        throw new StoreIOException("engine 'hashlog': cannot list " + dir + ": " + e, e);
      }
      report.lost(dir, -1, -1, -1, "the keyspace's directory cannot be read: " + e);
      return;
    }
    Manifest manifest = manifest(format);
    if (present.isEmpty()) {
      if (format > 0 || manifest != null) {
        report.lost(
            dir,
            -1,
            -1,
            -1,
            "no segment files, but a store was created here: every record is gone");
      }
      return;
    }
    SalvagePlan plan = SalvagePlan.of(storage, dir, present, manifest, report);
    if (plan.load.isEmpty()) {
      return;
    }
    Segments segments = new Segments(dir, storage);
    RecordReader reader = new RecordReader(segments, true, hasher);
    KeyDir keys = new KeyDir(1024);
    keys.recovering = true; // as an open: fill the table rather than refuse a key
    List<Segment> mapped = new ArrayList<>();
    try {
      for (int i = 0; i < plan.load.size(); i++) {
        Segment g = read(plan.load.get(i), i == plan.load.size() - 1, plan, segments, reader, keys);
        if (g != null) {
          mapped.add(g);
        }
      }
      keys.forEachLocation(loc -> emit(segments.at(loc), (int) loc));
    } finally {
      for (Segment g : mapped) {
        Mappings.unmap(g.map);
      }
    }
    HashLogStore.LOG.log(
        Level.DEBUG,
        "hashlog: salvaged {0} entries of {1}{2}",
        Long.toString(entries),
        dir,
        keyspace == null ? "" : " (keyspace '" + keyspace + "')");
  }

  /**
   * Checks the directory's identity as an open would, read-only.
   *
   * @return the store's format (1 when it has no identity), 0 if the identity is damaged (a
   *     region), -1 if there is no store here: an empty keyspace directory left by a crash
   * @throws StoreCorruptedException if an intact identity names another engine or a newer format,
   *     or the directory holds no segment file and is not this engine's
   */
  private int identity() {
    StoreConfig here = config.withPath(dir);
    try (StoreDirectory d = StoreDirectory.open(here, Opening.LAYOUT)) {
      return d.format();
    } catch (StoreIOException e) {
      if (keyspace == null) {
        throw e;
      }
      if (entries(dir).stream()
          .map(p -> p.getFileName().toString())
          .allMatch(n -> n.equals(io.kv4j.spi.DirectoryLock.FILE_NAME))) {
        return -1; // created, then a crash before its first file: an empty keyspace
      }
      report.lost(dir, -1, -1, -1, "the keyspace's directory cannot be read: " + e.getMessage());
      return -1;
    } catch (StoreCorruptedException e) {
      boolean segmentsHere =
          entries(dir).stream()
              .anyMatch(p -> Recovery.SEGMENT.matcher(p.getFileName().toString()).matches());
      if (identityIntact(dir.resolve(StoreDirectory.IDENTITY_FILE)) || !segmentsHere) {
        throw e; // another engine's store, a newer format, or no store of this engine
      }
      report.lost(
          e.file() == null ? dir : e.file(),
          e.offset(),
          -1,
          0,
          e.getMessage() + "; the segments were read all the same");
      return 0;
    }
  }

  /** Whether an identity file exists and its checksum line matches its text. */
  private static boolean identityIntact(Path file) {
    String text;
    try {
      text = new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return false;
    }
    int at = text.lastIndexOf("crc32c=");
    if (at < 0 || !text.endsWith("\n")) {
      return false;
    }
    CRC32C crc = new CRC32C();
    crc.update(text.substring(0, at).getBytes(StandardCharsets.UTF_8));
    return text.substring(at + "crc32c=".length(), text.length() - 1)
        .equals(String.format("%08x", crc.getValue()));
  }

  /** The manifest, or null if there is none or it is damaged (a region). */
  private Manifest manifest(int format) {
    Path mp = Manifest.path(dir);
    String without =
        "; without it, compacted segments whose deletion was interrupted cannot be told from live"
            + " ones, nor a clean close from a crash: every segment was read, the newest as after"
            + " a crash";
    try {
      Manifest m = Manifest.read(storage, dir);
      if (m == null && format >= 2) {
        report.lost(
            mp,
            -1,
            -1,
            0,
            "the segment manifest is missing, but the store's identity says it has one" + without);
      }
      return m;
    } catch (StoreCorruptedException e) {
      report.lost(mp, e.offset(), -1, 0, e.getMessage() + without);
    } catch (IOException e) {
      report.lost(mp, -1, -1, 0, "the segment manifest cannot be read: " + e + without);
    }
    return null;
  }

  // ---------------------------------------------------------------- one segment

  /**
   * Reads one segment's intact records into {@code keys} and reports its damage (see the class
   * comment).
   *
   * @return the mapped segment, to unmap at the end, or null if it could not be mapped
   */
  private Segment read(
      int id,
      boolean newest,
      SalvagePlan plan,
      Segments segments,
      RecordReader reader,
      KeyDir keys) {
    Path p = dir.resolve(Segment.fileName(id));
    Segment g;
    try {
      g = Segment.openSealed(storage, id, p);
    } catch (IOException e) {
      report.lost(p, -1, -1, -1, "the segment file cannot be read: " + e);
      return null;
    }
    segments.install(g);
    ByteBuffer m = g.map;
    int fileLen = g.end;
    boolean clean = newest && plan.clean;
    // The length the manifest recorded: at the clean close, or when a listed segment was sealed.
    long recorded = clean ? plan.newestLength : plan.sealedLength.getOrDefault(id, -1);
    boolean mayTear = newest && recorded < 0; // the active segment of a crash, or one rolled since
    if (mayTear
        && (fileLen < RecordCodec.FILE_HEADER
            || Recovery.garbageBytes(m, 0, RecordCodec.FILE_HEADER) == 0)) {
      return g; // created just before a crash: its header never reached the disk, nor any record
    }
    SalvageHint hint = newest ? null : SalvageHint.read(storage, dir, id, report);
    long sealedAt =
        recorded >= 0
            ? recorded
            : hint != null && hint.described() > fileLen ? hint.described() : fileLen;
    if (hint != null && hint.described() != sealedAt) {
      report.lost(
          HintFile.path(dir, id),
          0,
          -1,
          0,
          "the hint describes the segment at "
              + hint.described()
              + " bytes, but it was sealed at "
              + sealedAt
              + "; it is only an index: the segment was read record by record instead");
      hint = null;
    }
    if (fileLen < RecordCodec.FILE_HEADER) {
      report.lost(
          p,
          0,
          Math.max(fileLen, sealedAt),
          hint == null ? -1 : hint.offsets().length,
          hint == null ? null : hint.keys(0, Long.MAX_VALUE),
          "the segment file is " + fileLen + " bytes, shorter than its 32-byte header");
      return g;
    }
    String bad =
        RecordCodec.checkFileHeader(
            m.slice(0, RecordCodec.FILE_HEADER), RecordCodec.SEGMENT_MAGIC, id);
    if (bad != null) {
      report.lost(
          p,
          0,
          RecordCodec.FILE_HEADER,
          0,
          "bad segment header (" + bad + "); records read after it");
    }
    int limit = (int) Math.min(fileLen, sealedAt);
    List<SegmentScan.Stretch> stretches =
        SegmentScan.scan(
            m,
            RecordCodec.FILE_HEADER,
            limit,
            mayTear,
            (type, off, k, v) -> {
              byte[] key = RecordReader.keyAt(g, off, k);
              long h = KeyDir.fix(hasher.hash(key));
              long loc = Segments.location(id, off);
              if (type == RecordCodec.PUT) {
                keys.put(h, key, loc, RecordCodec.recordSize(k, v), reader);
              } else {
                keys.remove(h, key, reader);
              }
            });
    for (SegmentScan.Stretch s : stretches) {
      if (s.torn()) {
        continue; // the torn last write or the preallocated zeros of a crash: not damage
      }
      report.lost(
          p,
          s.from(),
          s.length(),
          hint != null
              ? hint.count(s.from(), s.to())
              : SegmentScan.countRecords(m, s.from(), s.to()),
          hint == null ? null : hint.keys(s.from(), s.to()),
          "invalid record (bad checksum or header); "
              + s.length()
              + " bytes skipped up to "
              + (s.to() < limit ? "the next intact record" : "the end of the segment's records"));
    }
    if (fileLen < sealedAt) {
      report.lost(
          p,
          fileLen,
          sealedAt - fileLen,
          hint == null ? -1 : hint.count(fileLen, sealedAt),
          hint == null ? null : hint.keys(fileLen, sealedAt),
          "the file was cut short: it is "
              + fileLen
              + " bytes, but it held "
              + sealedAt
              + (recorded >= 0 ? " (manifest " + Manifest.path(dir) + ")" : " (its hint)"));
    } else if (fileLen > sealedAt) {
      // After a clean close only zeros may follow the recorded end (recovery's rule); a sealed
      // segment was cut to its records when it was sealed.
      long beyond = clean ? Recovery.garbageBytes(m, limit, fileLen) : fileLen - sealedAt;
      if (beyond > 0) {
        report.lost(
            p,
            sealedAt,
            beyond,
            0,
            beyond
                + " bytes after the end recorded "
                + (clean ? "at the clean close" : "when the segment was sealed")
                + " (manifest "
                + Manifest.path(dir)
                + "): not part of the store; not read");
      }
    }
    return g;
  }

  /**
   * Hands the put record at {@code off} of {@code g} to the sink, its key and value copied out and
   * their CRC32C checked on the copies.
   */
  private void emit(Segment g, int off) {
    ByteBuffer m = g.map;
    long lengths = RecordCodec.lengths(m, off);
    int k = RecordCodec.keyLength(lengths);
    int v = RecordCodec.valueLength(lengths);
    byte[] key = RecordReader.keyAt(g, off, k);
    byte[] value = new byte[v];
    m.get(RecordCodec.valueOffset(off, k), value, 0, v);
    if (!RecordCodec.valueCrcMatches(m, off, lengths, key, value)) {
      report.lost(
          g.path,
          off,
          RecordCodec.recordSize(k, v),
          1,
          "the record changed on disk while it was salvaged (checksum mismatch on the second read)");
      return;
    }
    entries++;
    sink.entry(keyspace, key, value);
  }
}
