package io.kv4j.rocksdb;

import io.kv4j.StoreIOException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * What a salvage ({@link Salvage}) learns from the logs of its copy: every WAL read past damage
 * ({@link LogSurvey}) and rewritten in the copy as its intact records, the keys a damaged WAL span
 * appears to have written, WALs cut below their synced size, the MANIFEST {@code CURRENT} should
 * name, and whether that MANIFEST is damaged. Every damaged spot goes into the salvage's {@link
 * Regions}.
 */
final class LogDamage {
  private static final Pattern MANIFEST = Pattern.compile("MANIFEST-(\\d+)");

  private final Path dir;
  private final Path copy;
  private final Regions regions;

  /** The store's file a file of the copy came from, by name ({@link Salvage}). */
  private final Function<String, Path> source;

  /** The logs of the store in {@code dir}, read from its copy in {@code copy}. */
  LogDamage(Path dir, Path copy, Regions regions, Function<String, Path> source) {
    this.dir = dir;
    this.copy = copy;
    this.regions = regions;
    this.source = source;
  }

  /**
   * Keys that a damaged WAL span appears to have written (read from its records as they are,
   * checksums failed), by column family id, with the place of the span (WAL number, offset); a key
   * written again by an intact record after the span is dropped from here. Salvage withholds these
   * keys: their newest version was probably lost, and an older one from a table file would be
   * stale. A key whose bytes the damage itself changed cannot be recognised, so this narrows the
   * risk of a stale value rather than closing it.
   */
  final Map<Integer, Map<ByteBuffer, long[]>> suspects = new HashMap<>();

  /**
   * Every WAL read past damage; a damaged one is rewritten in the copy as its intact records. Then
   * the synced-WAL record's sizes: a WAL cut below what was synced of it lost its end.
   */
  void surveyWals() {
    for (Path wal : RecordLog.walFiles(copy)) {
      String name = wal.getFileName().toString();
      long number = Long.parseLong(name.substring(0, name.length() - ".log".length()));
      Path src = source.apply(name);
      try {
        LogSurvey s = LogSurvey.read(wal, true, null);
        for (LogSurvey.Span d : s.damage()) {
          walDamage.add(new WalSpan(number, src, d));
          for (byte[] hint : d.unverified()) {
            WalBatch.readWhatParses(
                hint,
                (cf, seq, key, value) ->
                    suspects
                        .computeIfAbsent(cf, c -> new HashMap<>())
                        .put(ByteBuffer.wrap(key), new long[] {number, d.offset()}));
          }
        }
        if (!suspects.isEmpty()) {
          clearRewritten(wal, number);
        }
        if (!s.damage().isEmpty() && !s.compressed()) {
          LogSurvey.rewrite(wal);
        }
      } catch (IOException e) {
        regions.add(new Region(src, 0, Salvage.size(src), null, -1, null, "cannot be read: " + e));
        Salvage.deleteQuietly(wal);
      }
    }
    Map<String, Long> synced;
    try {
      synced = SyncedWals.read(dir);
    } catch (RuntimeException e) {
      regions.add(
          new Region(
              dir.resolve(SyncedWals.FILE_NAME),
              -1,
              -1,
              null,
              0,
              null,
              "damaged; the WALs' synced sizes are unknown: " + e.getMessage()));
      return;
    }
    if (synced == null) {
      return;
    }
    for (Map.Entry<String, Long> e : synced.entrySet()) {
      Path wal = copy.resolve(e.getKey());
      if (!Files.exists(wal)) {
        continue; // deleted after a flush, or never there: cannot tell apart
      }
      long size = Salvage.size(wal);
      if (size >= 0 && size < e.getValue()) {
        regions.add(
            new Region(
                source.apply(e.getKey()),
                size,
                e.getValue() - size,
                null,
                -1,
                null,
                "cut short: "
                    + size
                    + " bytes, but "
                    + e.getValue()
                    + " bytes were on disk (synced); the writes in the missing end are lost"));
      }
    }
  }

  /** A damaged span of a WAL, reported once the oldest WAL the database needs is known. */
  private record WalSpan(long number, Path file, LogSurvey.Span span) {}

  private final List<WalSpan> walDamage = new ArrayList<>();

  /**
   * Reports the WALs' damaged spans. A WAL older than every one the database still needs ({@code
   * oldest}, from the MANIFEST; 0 if unknown) holds only writes that flushes already put into table
   * files: its damage costs nothing, and its suspects are dropped.
   */
  void reportWals(long oldest) {
    for (WalSpan w : walDamage) {
      LogSurvey.Span d = w.span();
      boolean obsolete = w.number() < oldest;
      regions.add(
          new Region(
              w.file(),
              d.offset(),
              d.length(),
              null,
              obsolete ? 0 : d.lostOperations(),
              null,
              d.problem()
                  + (obsolete
                      ? " (an obsolete write-ahead log: its writes are in table files, nothing"
                          + " lost)"
                      : " (write-ahead log: the writes in this span are lost, and the keys they"
                          + " appear to have written are not salvaged from older versions)")));
    }
    for (Map<ByteBuffer, long[]> m : suspects.values()) {
      m.values().removeIf(at -> at[0] < oldest);
    }
  }

  /** Drops the suspects an intact record of this WAL wrote again after their span. */
  private void clearRewritten(Path wal, long number) throws IOException {
    LogSurvey.read(
        wal,
        true,
        (offset, type, payload) -> {
          if (type != 1) {
            return;
          }
          WalBatch.readWhatParses(
              payload,
              (cf, seq, key, value) -> {
                Map<ByteBuffer, long[]> m = suspects.get(cf);
                long[] at = m == null ? null : m.get(ByteBuffer.wrap(key));
                if (at != null && (at[0] < number || (at[0] == number && at[1] < offset))) {
                  m.remove(ByteBuffer.wrap(key));
                }
              });
        });
  }

  /**
   * The MANIFEST the copy's {@code CURRENT} names; if it names none that exists, the newest
   * MANIFEST in the copy (written into the copy's {@code CURRENT}), or null if there is none.
   */
  String usableManifest() {
    String named = CleanClose.currentManifest(copy);
    if (named != null && Files.isRegularFile(copy.resolve(named))) {
      return named;
    }
    Path current = source.apply(Opening.CURRENT);
    String newest = null;
    long newestNumber = -1;
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(copy, "MANIFEST-*")) {
      for (Path p : ds) {
        var m = MANIFEST.matcher(p.getFileName().toString());
        if (m.matches() && Long.parseLong(m.group(1)) > newestNumber) {
          newestNumber = Long.parseLong(m.group(1));
          newest = p.getFileName().toString();
        }
      }
    } catch (IOException e) {
      throw new StoreIOException("engine '" + RocksDbProvider.ID + "': cannot list " + copy, e);
    }
    regions.add(
        new Region(
            current,
            0,
            Salvage.size(current),
            null,
            newest == null ? -1 : 0,
            null,
            (named == null ? "does not name a MANIFEST" : "names " + named + ", which is missing")
                + (newest == null ? "; no MANIFEST found" : "; read " + newest + " instead")));
    if (newest != null) {
      try {
        Files.writeString(copy.resolve(Opening.CURRENT), newest + "\n", StandardCharsets.UTF_8);
      } catch (IOException e) {
        throw new StoreIOException("engine '" + RocksDbProvider.ID + "': cannot write the copy", e);
      }
    }
    return newest;
  }

  /** Whether the MANIFEST has damage RocksDB would refuse, reported if so. */
  boolean manifestDamaged(String manifest) {
    Path src = source.apply(manifest);
    try {
      LogSurvey s = LogSurvey.read(copy.resolve(manifest), false, null);
      for (LogSurvey.Span d : s.damage()) {
        regions.add(
            new Region(
                src,
                d.offset(),
                d.length(),
                null,
                -1,
                null,
                d.problem() + " (MANIFEST, the list of table files)"));
      }
      return !s.damage().isEmpty();
    } catch (IOException e) {
      regions.add(new Region(src, 0, Salvage.size(src), null, -1, null, "cannot be read: " + e));
      return true;
    }
  }
}
