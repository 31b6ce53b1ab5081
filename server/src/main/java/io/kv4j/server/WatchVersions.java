package io.kv4j.server;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The server-side versions WATCH compares: 65,536 slots by key hash, bumped by every write under
 * its key's stripe lock while any connection watches a key. Keys sharing a slot can abort each
 * other's EXEC (a spurious abort the client retries), never hide a conflict. Shared by all
 * databases.
 *
 * <p>While no connection watches anything a write bumps nothing: a slot is a random line of a 512
 * KiB array, so its atomic increment is mostly a cache miss, paid by every key of every write. That
 * skips no bump a watch needs, because a watch is counted ({@link #watcherAdded}) before it reads
 * the key's version under the key's stripe lock, and a write reads the count after writing, under
 * the same lock: either the write's critical section came first (the write is visible to the
 * watcher, which watches the new value) or the watch's did (the write sees the count and bumps).
 */
final class WatchVersions {
  private static final int SLOTS = 1 << 16;

  private final AtomicLongArray versions = new AtomicLongArray(SLOTS);

  /** Connections watching at least one key. */
  private final AtomicInteger watchers = new AtomicInteger();

  private static int slot(byte[] key) {
    int h = Arrays.hashCode(key);
    h ^= h >>> 16;
    h *= 0x45d9f3b;
    h ^= h >>> 16;
    return h & (SLOTS - 1);
  }

  long of(byte[] key) {
    return versions.get(slot(key));
  }

  /** A key was written; the caller holds its stripe lock and has written it. */
  void bump(byte[] key) {
    if (watchers.get() != 0) {
      versions.incrementAndGet(slot(key));
    }
  }

  /** A connection starts watching: before it reads any version (see the class comment). */
  void watcherAdded() {
    watchers.incrementAndGet();
  }

  /** A connection that was counted by {@link #watcherAdded} watches nothing any more. */
  void watcherGone() {
    watchers.decrementAndGet();
  }

  /** Connections watching now. */
  int watchers() {
    return watchers.get();
  }

  /** FLUSHALL / FLUSHDB: every watch anywhere sees a change. */
  void bumpAll() {
    for (int i = 0; i < SLOTS; i++) {
      versions.incrementAndGet(i);
    }
  }
}
