package io.kv4j.hashlog;

import io.kv4j.StoreStats;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The figures {@code stats()} reports, gathered from the parts that keep them: the segments' byte
 * accounting (under the writer lock), the hints' sizes on disk (outside it: file system calls), the
 * index, the open's recovery counts, the group commit's forces, the preloader and the compactor.
 */
final class StoreFigures {
  private final Path dir;
  private final Segments segments;
  private final Index index;
  private final SegmentLog log;
  private final Opening opening;
  private final Preloader preloader;
  private final Compactor compactor;

  StoreFigures(
      Path dir,
      Segments segments,
      Index index,
      SegmentLog log,
      Opening opening,
      Preloader preloader,
      Compactor compactor) {
    this.dir = dir;
    this.segments = segments;
    this.index = index;
    this.log = log;
    this.opening = opening;
    this.preloader = preloader;
    this.compactor = compactor;
  }

  /**
   * The store's statistics now: key count, bytes on disk (segments and hints) and the figures.
   *
   * @param failed whether the store is failed until reopened
   * @param keyspaces the store's keyspaces, or null (a keyspace's sub-store, or not yet opened)
   */
  StoreStats stats(boolean failed, Keyspaces keyspaces) {
    long disk = 0;
    long live = 0;
    long dead = 0;
    long tomb = 0;
    int count = 0;
    long keys;
    long indexBytes;
    int[] sealed;
    int sealedCount = 0;
    segments.writeLock.lock();
    try {
      Segment[] all = segments.all();
      sealed = new int[all.length];
      for (Segment s : all) {
        if (!s.isRetired()) {
          if (s.isSealed()) {
            sealed[sealedCount++] = s.id;
          }
          count++;
          disk += s.end;
          live += s.liveBytes;
          dead += s.deadBytes();
          tomb += s.tombstoneBytes;
        }
      }
      keys = index.size();
      indexBytes = index.memoryBytes();
    } finally {
      segments.writeLock.unlock();
    }
    for (int i = 0; i < sealedCount; i++) { // outside the writer lock: file system calls
      disk += HintFile.bytesOnDisk(dir, sealed[i]);
    }
    Map<String, Number> f = new LinkedHashMap<>();
    f.put("segments", count);
    f.put("index-bytes", indexBytes);
    f.put("index-bytes-per-key", keys == 0 ? 0.0 : (double) indexBytes / keys);
    f.put("index-capacity", index.capacity());
    f.put("index-presized-keys", opening.presizedKeys);
    f.put("live-bytes", live);
    f.put("dead-bytes", dead);
    f.put("tombstone-bytes", tomb);
    f.put("truncated-tail-bytes", opening.truncatedTailBytes);
    f.put("hint-files-rebuilt", opening.hintsRebuilt);
    f.put("hint-entries-replayed", opening.hintEntriesReplayed);
    f.put("scan-view-builds", index.order.rebuilds());
    f.put("fsyncs", log.commit.forces());
    f.put("failed", failed ? 1 : 0);
    f.put("leftover-segments-removed", opening.leftoversRemoved);
    preloader.figures(f);
    if (keyspaces != null) {
      f.put("keyspaces-open", keyspaces.openCount());
    }
    compactor.figures(f, disk, live);
    return new StoreStats(keys, true, disk, f);
  }
}
