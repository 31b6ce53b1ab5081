package io.kv4j.server;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A FLUSHALL ASYNC in progress on database 0: keys written since it began are kept, all others are
 * hidden from reads, scans and DBSIZE until the background delete reaches them.
 */
final class AsyncFlush {
  final Set<Key> kept = ConcurrentHashMap.newKeySet();
  volatile boolean cancelled;

  /** Whether this flush hides {@code key} (it is not one written since the flush began). */
  boolean hides(byte[] key) {
    return !kept.contains(new Key(key));
  }
}
