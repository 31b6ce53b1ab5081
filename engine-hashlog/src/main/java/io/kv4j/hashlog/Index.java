package io.kv4j.hashlog;

import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.StampedLock;

/**
 * The index: the {@link KeyDir} from key hash to each key's newest record, behind a sequence lock,
 * and the {@link KeyOrder} ordered view for scans.
 *
 * <p>Lookups take no lock: an optimistic {@link StampedLock} stamp around the probe, retried if a
 * writer intervened, and after a few failures a read lock. Mutations come from one writer at a time
 * (the caller holds the writer lock of {@link Segments}) and bracket their changes with {@link
 * #beginUpdate}/{@link #endUpdate}, so a lookup sees either the old or the new entry, never an
 * entry whose record is not yet in the file (the writer appends before it updates).
 */
final class Index {
  private final KeyDir keys;
  private final KeyDir.Hasher hasher;
  private final RecordReader records;
  private final StampedLock seq = new StampedLock();

  /** The ordered view; its changes are guarded by the writer lock. */
  final KeyOrder order;

  Index(int initialKeys, KeyDir.Hasher hasher, RecordReader records, ReentrantLock writeLock) {
    this.keys = new KeyDir(initialKeys);
    this.hasher = hasher;
    this.records = records;
    this.order = new KeyOrder(records, keys, writeLock);
  }

  /** The key's hash as the index keeps it. */
  long hash(byte[] key) {
    return KeyDir.fix(hasher.hash(key));
  }

  /**
   * The location of a key's current record, 0, or a {@link KeyDir#SUSPECT suspect}; safe without
   * locks. {@code readAhead}: the caller will copy the record's value, so its lines are loaded at
   * once (see {@link RecordReader#keyEquals}); writers and compaction only need the key.
   */
  long find(long h, byte[] key, boolean readAhead) {
    for (int tries = 0; tries < 16; tries++) {
      long stamp = seq.tryOptimisticRead();
      if (stamp != 0) {
        long loc = keys.find(h, key, records, readAhead);
        if (seq.validate(stamp)) {
          return loc;
        }
      }
      Thread.onSpinWait();
    }
    long stamp = seq.readLock();
    try {
      return keys.find(h, key, records, readAhead);
    } finally {
      seq.unlockRead(stamp);
    }
  }

  /** Like {@link #find} for the writer, which holds the writer lock: no mutation can intervene. */
  long findLocked(long h, byte[] key) {
    return keys.find(h, key, records, false);
  }

  /** The location of a key's current put record, or 0. Safe without locks. */
  long locate(long hash, byte[] key) {
    return Math.max(0, find(hash, key, false));
  }

  /** Whether {@code loc} is the current record of the key with this hash. Safe without locks. */
  boolean isCurrent(long hash, long loc) {
    for (int tries = 0; tries < 16; tries++) {
      long stamp = seq.tryOptimisticRead();
      if (stamp != 0) {
        boolean r = keys.holds(hash, loc);
        if (seq.validate(stamp)) {
          return r;
        }
      }
      Thread.onSpinWait();
    }
    long stamp = seq.readLock();
    try {
      return keys.holds(hash, loc);
    } finally {
      seq.unlockRead(stamp);
    }
  }

  /**
   * Brings the index slots of {@code hashes[from..to)} into the CPU cache, their misses overlapped
   * (see {@link KeyDir#touchHomes}), before the caller looks the keys up one by one: compaction
   * checking a group of a victim's records, or switching a chunk of moved records under the writer
   * lock, which writers then wait for the shorter. Without it each lookup paid its own miss into
   * the table, about half of a compaction run's CPU under uniform overwrites. Safe without locks.
   */
  void warm(long[] hashes, int from, int to) {
    RecordReader.keep(keys.touchHomes(hashes, from, to));
  }

  // ---------------------------------------------------------------- mutations

  /** Starts a batch of mutations that lookups must not see half-done; returns the stamp. */
  long beginUpdate() {
    return seq.writeLock();
  }

  void endUpdate(long stamp) {
    seq.unlockWrite(stamp);
  }

  /**
   * Points the key at the put record at {@code loc} of {@code size} bytes, or (a delete) removes
   * it. Caller holds the writer lock, and a stamp of {@link #beginUpdate} unless nothing reads yet
   * (recovery at open).
   *
   * @return the location the key had, or 0
   */
  long apply(int type, long hash, byte[] key, long loc, long size) {
    return apply(type, hash, key, loc, size, records);
  }

  /**
   * Like {@link #apply}, with the key compared by {@code src} when the hash matches an entry (the
   * key bytes are not at hand: see {@link HintReplay}). Recovery only, before anything reads.
   */
  long applyFrom(int type, long hash, long loc, long size, KeyDir.KeySource src) {
    return apply(type, hash, null, loc, size, src);
  }

  private long apply(int type, long hash, byte[] key, long loc, long size, KeyDir.KeySource src) {
    return type == RecordCodec.PUT
        ? keys.put(hash, key, loc, size, src)
        : keys.remove(hash, key, src);
  }

  /** Whether the record at {@code loc} holds {@code key}. */
  boolean keyEquals(long loc, byte[] key) {
    return records.keyEquals(loc, key, 0);
  }

  /** The table slot a key of this hash probes first (see {@link KeyDir#slot}). */
  int slot(long hash) {
    return keys.slot(hash);
  }

  /**
   * Sizes the hash table for {@code keys} keys at once (see {@link KeyDir#reserve}). Recovery only,
   * before anything reads.
   *
   * @return whether the table grew
   */
  boolean reserve(long keys) {
    return this.keys.reserve(keys);
  }

  /** Recovery at open starts or ends (see {@link KeyDir#recovering}). */
  void recovering(boolean on) {
    keys.recovering = on;
  }

  /**
   * Moves a key's entry from {@code from} to {@code to} if it still points at {@code from}
   * (compaction). Caller holds the writer lock and a stamp.
   */
  boolean replace(long hash, long from, long to) {
    return keys.replace(hash, from, to);
  }

  // ---------------------------------------------------------------- figures

  int size() {
    return keys.size();
  }

  int capacity() {
    return keys.capacity();
  }

  /** Heap bytes of the hash table and the ordered view. Caller holds the writer lock. */
  long memoryBytes() {
    return keys.memoryBytes() + order.memoryBytes();
  }
}
