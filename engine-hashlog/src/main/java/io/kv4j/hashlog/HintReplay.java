package io.kv4j.hashlog;

import java.util.Arrays;

/**
 * Replays the entries of sealed segments' hint files into the index at open, in batches sorted by
 * the table slot each key hashes to.
 *
 * <p>Why: at open the table is sized once for every key ({@link Opening#presize}), so at 100
 * million keys it is 2 GiB, far beyond the caches and the TLB. Placed in log order, every key lands
 * on a random slot, a cache miss and a full page walk each: nearly all of an open's time (a JFR
 * profile of a 3 M key open had 96% of its samples in {@link KeyDir#put}). Sorted by slot, a batch
 * visits the table once from start to end, in address order, so the walks of neighbouring entries
 * share their upper levels. Reopening 30 M keys of 16 bytes (1 GiB table) took 4.6 to 5.9 s of CPU
 * this way against 14.4 to 17.2 s in log order (same store, builds taking turns).
 *
 * <p>Order: the entries of one key must be applied in log order (a later put or delete supersedes
 * an earlier one). One key has one hash and so one slot, and the sort is stable (least significant
 * digit first, 8 bits a pass), so a key's entries keep their order within a batch; batches are
 * applied in log order, and the caller {@link #flush flushes} before it applies anything that does
 * not come through here (a segment without a usable hint, the newest segment). Keys of different
 * slots may be applied in another order than the log's: the table's final content does not depend
 * on it, only where in a probe run a key sits.
 *
 * <p>Keys: an entry's key bytes are needed only when its hash matches an entry already in the table
 * (an overwrite, a delete, or two keys sharing a 60-bit hash), to compare the keys. They are kept
 * in a pool in log order and read from it only then.
 *
 * <p>Memory: a batch takes at most {@link #MAX_BATCH} entries and at most 1/16 of the maximum heap
 * (the entries twice, for the sort, and the key pool); the arrays are dropped when the open ends.
 * Not thread-safe: the opening thread only.
 */
final class HintReplay implements KeyDir.KeySource {
  /**
   * Most entries in one batch: 512 Ki (12 MiB of entries, as much again to sort them, and their
   * keys). Larger batches did not open faster: reopening 30 M keys took 4.5 to 5.4 s of CPU with
   * batches of 64 Ki to 16 Mi entries alike, so the gain is in visiting pages in address order (the
   * page walks hit the paging-structure caches), not in the density of one sweep.
   */
  static final int MAX_BATCH = 1 << 19;

  /**
   * A store's batch and key-pool sizes, from its open options: production takes {@link #BY_HEAP};
   * tests pass small ones to split a replay into many batches.
   *
   * @param batch entries per batch instead of {@link #batchFor}'s (0: by the heap)
   * @param pool the key pool's limit in bytes (0: by the heap; never below one longest key)
   */
  record Sizes(int batch, int pool) {
    static final Sizes BY_HEAP = new Sizes(0, 0);
  }

  /** Fewest entries in one batch, whatever the heap. */
  static final int MIN_BATCH = 1 << 10;

  /** Longs per entry in {@link #entries}: hash, location, then pool offset | delete bit | size. */
  private static final int LONGS = 3;

  private static final long DELETE_BIT = 1L << 31;
  private static final long SIZE_MASK = DELETE_BIT - 1;

  /** Largest pool: offsets are kept in 32 bits, and a Java array holds fewer than 2^31 bytes. */
  private static final int MAX_POOL = Integer.MAX_VALUE - 64;

  private final Index index;
  private final Segments segments;
  private final int batch;
  private final int poolLimit;

  private long[] entries;
  private long[] scratch;
  private byte[] pool;
  private int count;
  private int poolEnd;

  /** The pool offset of the entry being applied, for {@link #keyEquals}. */
  private int current;

  private final int[] digits = new int[257];

  /** Entries applied in all, for tests and stats. */
  long applied;

  /**
   * @param expected entries the open expects (from the hints' headers), or 0 if unknown; only sizes
   *     the first arrays
   * @param maxHeap the JVM's maximum heap
   */
  HintReplay(Index index, Segments segments, long expected, long maxHeap, Sizes sizes) {
    this.index = index;
    this.segments = segments;
    this.batch = sizes.batch() > 0 ? sizes.batch() : batchFor(maxHeap);
    int forTests = sizes.pool();
    // Room for at least one entry of the longest key, whatever the heap.
    this.poolLimit =
        forTests > 0
            ? Math.max(forTests, 2 + RecordCodec.MAX_KEY)
            : (int) Math.min(MAX_POOL, Math.max(2 + RecordCodec.MAX_KEY, maxHeap / 32));
    int first = (int) Math.max(1, Math.min(batch, expected > 0 ? expected : MIN_BATCH));
    this.entries = new long[first * LONGS];
    this.pool = new byte[(int) Math.min(poolLimit, Math.max(1 << 16, first * 20L))];
  }

  /** Entries per batch for a JVM of this maximum heap (see the class comment). */
  static int batchFor(long maxHeap) {
    long perEntry = 2L * LONGS * Long.BYTES + 20; // entries, scratch, a short key in the pool
    return (int) Math.max(MIN_BATCH, Math.min(MAX_BATCH, maxHeap / 16 / perEntry));
  }

  /**
   * Adds one hint entry; applies the batch first if it is full.
   *
   * @param location where the record is ({@link Segments#location})
   * @param size the record's bytes ({@link RecordCodec#recordSize})
   */
  void add(boolean delete, byte[] key, long location, long size) {
    int need = 2 + key.length;
    if (count == batch || poolEnd + need > poolLimit) {
      flush();
    }
    if (count * LONGS == entries.length) {
      entries = Arrays.copyOf(entries, (int) Math.min((long) batch * LONGS, 2L * entries.length));
    }
    if (poolEnd + need > pool.length) {
      pool =
          Arrays.copyOf(
              pool, (int) Math.min(poolLimit, Math.max(2L * pool.length, poolEnd + need)));
    }
    int at = poolEnd;
    int k = key.length - 1; // 1..MAX_KEY stored as 0..MAX_KEY-1 in two bytes
    pool[at] = (byte) (k >>> 8);
    pool[at + 1] = (byte) k;
    System.arraycopy(key, 0, pool, at + 2, key.length);
    poolEnd = at + need;
    int e = count * LONGS;
    entries[e] = index.hash(key);
    entries[e + 1] = location;
    entries[e + 2] = (long) at << 32 | (delete ? DELETE_BIT : 0) | size;
    count++;
  }

  /** Applies the entries added so far to the index and the byte accounting, in slot order. */
  void flush() {
    if (count == 0) {
      return;
    }
    sortBySlot();
    long[] e = entries;
    for (int i = 0; i < count * LONGS; i += LONGS) {
      long hash = e[i];
      long loc = e[i + 1];
      long meta = e[i + 2];
      current = (int) (meta >>> 32);
      int type = (meta & DELETE_BIT) != 0 ? RecordCodec.DELETE : RecordCodec.PUT;
      long size = meta & SIZE_MASK;
      long old = index.applyFrom(type, hash, loc, size, this);
      segments.account(segments.at(loc), type, size, old);
    }
    applied += count;
    count = 0;
    poolEnd = 0;
  }

  /** Applies what is left and lets the arrays go. */
  void finish() {
    flush();
    entries = new long[0];
    scratch = null;
    pool = new byte[0];
  }

  /** Compares the record at {@code location} with the key of the entry being applied. */
  @Override
  public boolean keyEquals(long location, byte[] ignored, int span) {
    int at = current;
    int k = ((pool[at] & 0xFF) << 8 | (pool[at + 1] & 0xFF)) + 1;
    return index.keyEquals(location, Arrays.copyOfRange(pool, at + 2, at + 2 + k));
  }

  /**
   * Stable sort of the batch by the top (at most 16) bits of each entry's slot in the table as it
   * is now, 8 bits a pass. Within one group of the top 16 bits (at 2^27 slots: 2048 slots, 32 KiB,
   * 8 pages) order does not matter for the sweep: a batch puts about 8 entries there, and the pages
   * stay in the TLB while it does.
   */
  private void sortBySlot() {
    int bits = Integer.numberOfTrailingZeros(index.capacity());
    int digitBits = Math.min(bits, 16);
    int shift = bits - digitBits;
    if (scratch == null || scratch.length < count * LONGS) {
      scratch = new long[entries.length];
    }
    long[] src = entries;
    long[] dst = scratch;
    int n = count;
    int[] c = digits;
    for (int pass = 0; pass * 8 < digitBits; pass++) {
      int sh = shift + pass * 8;
      Arrays.fill(c, 0);
      for (int i = 0; i < n * LONGS; i += LONGS) {
        c[((index.slot(src[i]) >>> sh) & 0xFF) + 1]++;
      }
      for (int d = 0; d < 256; d++) {
        c[d + 1] += c[d];
      }
      for (int i = 0; i < n * LONGS; i += LONGS) {
        int j = c[(index.slot(src[i]) >>> sh) & 0xFF]++ * LONGS;
        dst[j] = src[i];
        dst[j + 1] = src[i + 1];
        dst[j + 2] = src[i + 2];
      }
      long[] t = src;
      src = dst;
      dst = t;
    }
    entries = src;
    scratch = dst;
  }
}
