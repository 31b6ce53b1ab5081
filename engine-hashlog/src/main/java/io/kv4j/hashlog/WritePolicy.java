package io.kv4j.hashlog;

import io.kv4j.Durability;
import java.io.IOException;
import java.nio.file.Path;

/**
 * How the log makes its writes durable: the store's {@link Durability} as behaviour, chosen once at
 * open ({@link #of}). Every place whose work differs between the two settings asks the policy to do
 * it: how a record reaches the segment file, whether a write waits for a force, how a full segment
 * is sealed, how a new active segment is created, and whether compaction must keep its output
 * durable. See {@link SegmentLog} and {@link Segment} for why each setting writes as it does.
 */
enum WritePolicy {
  /**
   * A write returns once forced (through {@link GroupCommit}); records reach the file with {@code
   * write(2)}; a segment is forced when it is sealed, before the next one exists.
   */
  SYNC {
    @Override
    void put(Segment s, int position, byte[] src, int off, int len) throws IOException {
      s.stageWrite(position, src, off, len);
    }

    @Override
    boolean allocatesAhead() {
      return false;
    }

    @Override
    void awaitDurable(GroupCommit commit, long lsn) {
      commit.await(lsn);
    }

    @Override
    boolean seal(Segment old, GroupCommit commit) throws IOException {
      old.seal();
      commit.durableUpTo(Segments.location(old.id, old.end));
      return false;
    }

    @Override
    Segment create(Storage storage, int id, Path path, int capacity, int previous)
        throws IOException {
      return Segment.create(storage, id, path, capacity, previous, false);
    }

    @Override
    void started(Segment s, Sealer sealer) {
      s.writeWith(this);
    }

    @Override
    boolean promisesEveryWrite() {
      return true;
    }
  },

  /**
   * A write returns once in the page cache; records are stored through the mapping into a file
   * allocated ahead of them; a sealed segment is closed unforced and queued for the next sync.
   */
  BUFFERED {
    @Override
    void put(Segment s, int position, byte[] src, int off, int len) throws IOException {
      s.storeMapped(position, src, off, len);
    }

    @Override
    boolean allocatesAhead() {
      return true;
    }

    @Override
    void awaitDurable(GroupCommit commit, long lsn) {
      // The page cache holds the write already: nothing to wait for.
    }

    @Override
    boolean seal(Segment old, GroupCommit commit) throws IOException {
      old.finish();
      old.closeUnforced();
      commit.unforced(old);
      return true;
    }

    @Override
    Segment create(Storage storage, int id, Path path, int capacity, int previous)
        throws IOException {
      return Segment.createAllocated(storage, id, path, capacity, previous);
    }

    @Override
    void started(Segment s, Sealer sealer) {
      s.writeWith(this);
      sealer.allocateAhead(s);
    }

    @Override
    boolean promisesEveryWrite() {
      return false;
    }
  };

  /** The policy of a store opened with {@code durability}. */
  static WritePolicy of(Durability durability) {
    return durability == Durability.SYNC ? SYNC : BUFFERED;
  }

  /**
   * Puts {@code len} bytes of {@code src} at {@code position} of the active segment {@code s}
   * (writer only): staged for one {@code write(2)} at the next {@link Segment#flush}, or stored
   * through the mapping at once.
   */
  abstract void put(Segment s, int position, byte[] src, int off, int len) throws IOException;

  /** Whether the segment's file is allocated ahead of the writer (stores through the mapping). */
  abstract boolean allocatesAhead();

  /** Returns once everything up to {@code lsn} is as durable as a write must be to return. */
  abstract void awaitDurable(GroupCommit commit, long lsn);

  /**
   * Ends writing to the active segment {@code old}: truncated to its data and forced, or closed
   * unforced and queued for the next sync. Caller holds the writer lock.
   *
   * @return whether the next segment's directory entry may be made durable later
   */
  abstract boolean seal(Segment old, GroupCommit commit) throws IOException;

  /** Creates the file of a new active segment, holding only its header. */
  abstract Segment create(Storage storage, int id, Path path, int capacity, int previous)
      throws IOException;

  /**
   * {@code s}, just created, becomes the active segment: the writer writes it as this policy says
   * (a segment recovered at open is only {@link Segment#writeWith told}).
   */
  abstract void started(Segment s, Sealer sealer);

  /**
   * Whether any acknowledged write may have been promised durable, so that a compaction run must
   * force its output and the log before it deletes a victim (in BUFFERED only a victim a sync
   * forced holds promised records, {@link Segment#holdsDurable}).
   */
  abstract boolean promisesEveryWrite();
}
