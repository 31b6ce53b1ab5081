package io.kv4j.hashlog;

/**
 * A segment's life. The order of a segment written by the store: {@code ACTIVE -> SEALED} (a roll
 * finished it), {@code SEALED -> SEALING -> SEALED} while the {@link Sealer} writes its hint,
 * {@code SEALED -> COMPACTING} when a compaction run claims it, then either back to {@code SEALED}
 * (the run stopped before it retired it), {@code UNREADABLE} (the run found a bad record) or {@code
 * RETIRED -> DROPPED -> DELETED}. A compaction output is opened {@code SEALED} and claimed ({@code
 * COMPACTING}) while the index moves to it. An active segment closed with the store is {@code
 * CLOSED}.
 */
enum SegmentPhase {
  /** Written by the writer; the only phase with records being appended. */
  ACTIVE,
  /** Closed with the store (or after a failed creation) while active, without being sealed. */
  CLOSED,
  /** Finished: truncated to its data, read-only; a compaction victim once its hint is written. */
  SEALED,
  /** Sealed, its hint still queued for the {@link Sealer}: not a compaction victim yet. */
  SEALING,
  /** Claimed by a running compaction run (a victim, or an output whose entries still move). */
  COMPACTING,
  /** Compaction found a bad record here: never chosen again. Still read as sealed. */
  UNREADABLE,
  /**
   * Compacted away: no index entry points here any more, but the mapping stays installed until no
   * reader or cursor can still hold one of its locations.
   */
  RETIRED,
  /** Committed as compacted away in the manifest: no longer listed as live. */
  DROPPED,
  /**
   * Its file deleted by the run that retired it. Until then the file is still on disk, and the
   * compaction throttle counts all of it as garbage.
   */
  DELETED;

  /** Whether a segment may move from this phase to {@code to}. */
  boolean mayMoveTo(SegmentPhase to) {
    switch (this) {
      case ACTIVE:
        return to == SEALED || to == CLOSED;
      case SEALED:
        return to == SEALING || to == COMPACTING;
      case SEALING:
        return to == SEALED;
      case COMPACTING:
        return to == SEALED || to == UNREADABLE || to == RETIRED;
      case RETIRED:
        return to == DROPPED;
      case DROPPED:
        return to == DELETED;
      default:
        return false;
    }
  }
}
