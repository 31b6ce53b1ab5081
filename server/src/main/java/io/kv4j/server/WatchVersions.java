package io.kv4j.server;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The server-side versions WATCH compares: 65,536 slots by key hash, bumped by every write under
 * its key's stripe lock. Keys sharing a slot can abort each other's EXEC (a spurious abort the
 * client retries), never hide a conflict. Shared by all databases.
 */
final class WatchVersions {
  private static final int SLOTS = 1 << 16;

  private final AtomicLongArray versions = new AtomicLongArray(SLOTS);

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

  void bump(byte[] key) {
    versions.incrementAndGet(slot(key));
  }

  /** FLUSHALL / FLUSHDB: every watch anywhere sees a change. */
  void bumpAll() {
    for (int i = 0; i < SLOTS; i++) {
      versions.incrementAndGet(i);
    }
  }
}
