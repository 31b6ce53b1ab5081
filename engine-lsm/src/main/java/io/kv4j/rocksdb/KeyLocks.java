package io.kv4j.rocksdb;

import io.kv4j.WriteBatch;
import io.kv4j.spi.CallGate;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Orders conditional writes with every other write of the same key, while plain writes pay for that
 * only when a conditional write is running. RocksDB has no compare-and-set on a plain database, so
 * a conditional write (and a conditional batch) reads its keys and writes under the stripe locks of
 * those keys: 1,024 {@link ReentrantLock}s chosen by key hash. The store directory's lock makes
 * this process the only writer, so in-process locks suffice.
 *
 * <p>Plain writes ({@code put}, {@code delete}, batches) take no stripe in the common case. Two
 * modes, switched by a count of the conditional writes running:
 *
 * <ul>
 *   <li>None running: a plain write is counted in {@link #unlocked} (one atomic increment of a
 *       per-thread-stripe counter, {@link CallGate}) and writes without any stripe.
 *   <li>One or more running: a plain write takes the stripes of its keys, as a conditional write
 *       does (a put or delete its one stripe, a batch the stripes of all its keys, taken in one
 *       ascending pass over a bitmap of stripe indices, no sort and no per-key object).
 * </ul>
 *
 * <p>The handshake ({@link #beginConditional()}, {@link #enterUnlocked()}): a conditional write
 * first raises the count, then waits for every plain write counted in {@link #unlocked} before
 * ({@link CallGate#awaitEarlier()}), and only then takes its stripes and reads. A plain write is
 * counted first and reads the count after; both are sequentially consistent atomics, so either the
 * plain write sees the count raised (and takes its stripes, so it lands wholly before the
 * conditional write's read or wholly after its write) or the conditional write sees the plain write
 * counted (and waits until it has landed before reading). No plain write can land between a
 * conditional write's read and its write.
 *
 * <p>Deadlock freedom: a thread holds either one stripe (put, delete, conditional write) or a set
 * taken in ascending stripe order (batch, conditional batch), and never asks for another stripe
 * while holding one out of that order; a conditional write waits for unlocked plain writes before
 * it takes any stripe, and those hold none.
 */
final class KeyLocks {
  /**
   * 1024 stripes: two of 16 writers on different keys share a stripe with a chance of about 11%,
   * and then only wait for each other's write (a synced write holds its lock through the WAL's
   * fsync). About 48 KiB per store.
   */
  static final int STRIPES = 1024;

  private final ReentrantLock[] locks = new ReentrantLock[STRIPES];

  /** The plain writes writing without stripes now; never closed. */
  private final CallGate unlocked = new CallGate();

  /** The conditional writes running now (between begin and end). */
  private final AtomicInteger conditional = new AtomicInteger();

  KeyLocks() {
    for (int i = 0; i < STRIPES; i++) {
      locks[i] = new ReentrantLock();
    }
  }

  /**
   * Lets a plain write proceed without stripes if no conditional write is running.
   *
   * @return a token for {@link #exitUnlocked(int)} once the write has landed (or failed), or -1: a
   *     conditional write is running, take the stripes (nothing to exit)
   */
  int enterUnlocked() {
    if (conditional.get() != 0) {
      return -1; // read first: while conditional writes run, plain writes do not touch the gate
    }
    int token = unlocked.enter(); // the gate is never closed: never -1
    if (conditional.get() != 0) { // read after being counted: see the class comment
      unlocked.exit(token);
      return -1;
    }
    return token;
  }

  /** Ends a plain write that {@link #enterUnlocked()} let through. */
  void exitUnlocked(int token) {
    unlocked.exit(token);
  }

  /**
   * Starts a conditional write: from now on plain writes take their stripes, and this waits until
   * every plain write that went ahead without them has landed. Call before taking any stripe, and
   * {@link #endConditional()} after releasing them.
   */
  void beginConditional() {
    conditional.incrementAndGet();
    boolean ok = false;
    try {
      unlocked.awaitEarlier();
      ok = true;
    } finally {
      if (!ok) {
        conditional.decrementAndGet();
      }
    }
  }

  /** Ends a conditional write started by {@link #beginConditional()}. */
  void endConditional() {
    conditional.decrementAndGet();
  }

  /**
   * The stripe of a key: its content hash, spread so that short keys differing late still land
   * apart.
   */
  static int stripe(int salt, byte[] key) {
    int h = Arrays.hashCode(key) + salt; // salt: the keyspace's (0 for the store's own keys)
    h ^= h >>> 16;
    h *= 0x85ebca6b; // murmur3's finaliser: every input bit reaches the low bits used here
    h ^= h >>> 13;
    return h & (STRIPES - 1);
  }

  /**
   * The lock of a key's stripe; the caller locks and unlocks it (a plain write only when {@link
   * #enterUnlocked()} refused).
   *
   * @param salt the keyspace's {@link Column#salt}
   * @param key the key
   */
  ReentrantLock of(int salt, byte[] key) {
    return locks[stripe(salt, key)];
  }

  /**
   * The calling thread's stripe bitmap for {@link #lock(WriteBatch, int, Column[])}: one bit per
   * stripe, reused, so a batch allocates nothing for its locks (a batch of 1,000 puts allocates 40
   * bytes on the heap in all, a test asserts under 1,000). A thread holds it only between {@code
   * lock} and {@code unlock} of one batch, and never writes another batch in between.
   */
  private static final ThreadLocal<long[]> BATCH_STRIPES =
      ThreadLocal.withInitial(() -> new long[STRIPES / 64]);

  /**
   * Locks the stripes of every (keyspace, key) of a batch, each once, in ascending order.
   *
   * @param salt the salt of the keyspace the batch is written to
   * @param columns the column of each operation, or null if all go to that keyspace
   * @return the stripes taken, a bitmap for {@link #unlock(long[])}
   */
  long[] lock(WriteBatch batch, int salt, Column[] columns) {
    long[] bits = BATCH_STRIPES.get();
    Arrays.fill(bits, 0);
    for (int i = 0, n = batch.size(); i < n; i++) {
      mark(bits, stripe(columns == null ? salt : columns[i].salt, batch.key(i)));
    }
    return take(bits);
  }

  /**
   * Locks the stripes of every (keyspace, key) a conditional batch reads or writes, each once, in
   * ascending order, like {@link #lock(WriteBatch, int, Column[])}. Salts come from the keyspace
   * names ({@link Column#saltOf}), so a keyspace that does not exist yet has its stripes too.
   *
   * @param salt the salt of the keyspace the batch is written to
   * @param operationSpaces the keyspace of each operation (null: the store's own keys), or null if
   *     all go to the keyspace the batch is written to
   * @param conditionSpaces the keyspace of each condition (null: the store's own keys)
   * @return the stripes taken, a bitmap for {@link #unlock(long[])}
   */
  long[] lock(WriteBatch batch, int salt, String[] operationSpaces, String[] conditionSpaces) {
    long[] bits = BATCH_STRIPES.get();
    Arrays.fill(bits, 0);
    for (int i = 0, n = batch.size(); i < n; i++) {
      int s = operationSpaces == null ? salt : Column.saltOf(operationSpaces[i]);
      mark(bits, stripe(s, batch.key(i)));
    }
    for (int i = 0, n = batch.conditionCount(); i < n; i++) {
      mark(bits, stripe(Column.saltOf(conditionSpaces[i]), batch.conditionKey(i)));
    }
    return take(bits);
  }

  private static void mark(long[] bits, int stripe) {
    bits[stripe >>> 6] |= 1L << stripe;
  }

  /** Locks the stripes of a bitmap in ascending order; on an Error releases what it took. */
  private long[] take(long[] bits) {
    int taken = 0;
    try {
      for (int w = 0; w < bits.length; w++) {
        for (long m = bits[w]; m != 0; m &= m - 1) {
          locks[(w << 6) + Long.numberOfTrailingZeros(m)].lock();
          taken++;
        }
      }
      taken = -1;
    } finally {
      if (taken >= 0) { // only an Error can get here: release what was taken
        for (int w = 0; w < bits.length && taken > 0; w++) {
          for (long m = bits[w]; m != 0 && taken > 0; m &= m - 1) {
            locks[(w << 6) + Long.numberOfTrailingZeros(m)].unlock();
            taken--;
          }
        }
      }
    }
    return bits;
  }

  /** Unlocks the stripes taken by {@link #lock(WriteBatch, int, Column[])}. */
  void unlock(long[] bits) {
    for (int w = 0; w < bits.length; w++) {
      for (long m = bits[w]; m != 0; m &= m - 1) {
        locks[(w << 6) + Long.numberOfTrailingZeros(m)].unlock();
      }
    }
  }
}
