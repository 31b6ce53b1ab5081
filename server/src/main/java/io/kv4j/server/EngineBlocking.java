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
 *   <li>{@code hashlog} with {@link Durability#SYNC}: reads as above; a write waits for its fsync,
 *       so writes run on the workers, except plain SETs, which the event loops hand to the {@link
 *       SetCommitter} (one batch, one fsync, for all the connections served meanwhile).
 *   <li>Every other engine: commands run on the workers.
 * </ul>
 */
final class EngineBlocking {
  private final boolean reads;
  private final boolean writes;
  private final boolean committer;

  private EngineBlocking(boolean reads, boolean writes, boolean committer) {
    this.reads = reads;
    this.writes = writes;
    this.committer = committer;
  }

  /**
   * @param policy {@code auto}, {@code reads} or {@code none} (see {@link
   *     ServerOptions#loopCommands()})
   */
  static EngineBlocking of(Store store, String policy) {
    String type = store.getClass().getName();
    boolean memory = type.equals("io.kv4j.memory.MemoryStore");
    boolean hashlog = type.equals("io.kv4j.hashlog.HashLogStore");
    boolean buffered = hashlog && store.info().durability() == Durability.BUFFERED;
    boolean reads = (memory || hashlog) && !policy.equals("none");
    boolean writes = (memory || buffered) && reads && policy.equals("auto");
    return new EngineBlocking(reads, writes, hashlog && !buffered && reads);
  }

  /**
   * Whether plain SETs gathered by the event loops go to one committer thread ({@link
   * SetCommitter}): writes that wait for an fsync, on an engine whose reads do not wait.
   */
  boolean setsToCommitter() {
    return committer;
  }

  boolean readsNeverBlock() {
    return reads;
  }

  boolean writesNeverBlock() {
    return writes;
  }
}
