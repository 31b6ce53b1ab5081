package io.kv4j.server;

import io.kv4j.Durability;
import io.kv4j.Store;

/**
 * Whether an engine's calls can wait (for a disk, a network or a lock held across I/O), which
 * decides whether commands may run on an event loop, where a wait would hold every connection of
 * that loop. Judged by the store's own class, so a store that wraps an engine (and may block in its
 * own ways) is never taken for it:
 *
 * <ul>
 *   <li>{@code memory}: a map behind a read-write lock that is held only for map operations; reads
 *       and writes never wait for I/O.
 *   <li>{@code hashlog} with {@link Durability#BUFFERED}: a read is a hash lookup and a copy out of
 *       mapped segments; a write copies into the mapped active segment and forces nothing. Both can
 *       still wait, rarely: a read of a record not in the page cache reads the disk, and a write
 *       waits while compaction is far behind (the engine's throttle) or while a segment roll forces
 *       under the writer lock. {@code --loop-commands reads} keeps the writes on the workers, and
 *       {@code none} everything.
 *   <li>Every other engine, and hashlog with {@link Durability#SYNC} (each write waits for its
 *       fsync): commands run on the workers.
 * </ul>
 */
final class EngineBlocking {
  private final boolean reads;
  private final boolean writes;

  private EngineBlocking(boolean reads, boolean writes) {
    this.reads = reads;
    this.writes = writes;
  }

  /**
   * @param policy {@code auto}, {@code reads} or {@code none} (see {@link
   *     ServerOptions#loopCommands()})
   */
  static EngineBlocking of(Store store, String policy) {
    String type = store.getClass().getName();
    boolean memory = type.equals("io.kv4j.memory.MemoryStore");
    boolean buffered =
        type.equals("io.kv4j.hashlog.HashLogStore")
            && store.info().durability() == Durability.BUFFERED;
    boolean reads = (memory || buffered) && !policy.equals("none");
    return new EngineBlocking(reads, reads && policy.equals("auto"));
  }

  boolean readsNeverBlock() {
    return reads;
  }

  boolean writesNeverBlock() {
    return writes;
  }
}
