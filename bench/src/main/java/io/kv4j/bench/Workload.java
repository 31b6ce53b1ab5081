package io.kv4j.bench;

import io.kv4j.Cursor;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.WriteBatch;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * The operations of every scenario against one loaded store, shared by the runner and the JMH
 * benchmarks. Thread-safe: each worker thread uses its own {@link Worker}.
 *
 * <p>Inserts (YCSB D and E) take new indices from a shared counter. A read of the "latest" keys
 * only picks indices whose insert has completed: a reader reads the counter first, then the lowest
 * index any worker is still inserting, so it never asks for a key that is not there yet and every
 * read can demand a hit.
 */
public final class Workload {
  /** Most workers a workload supports. */
  static final int MAX_WORKERS = 256;

  private final Store store;
  private final Data data;
  private final long loaded;
  private final Zipfian zipf;
  private final AtomicLong next;
  private final AtomicLongArray inFlight = new AtomicLongArray(MAX_WORKERS);
  private final AtomicLong workers = new AtomicLong();
  private final LongAdder writes = new LongAdder();

  /**
   * Describes the workload on a store holding keys {@code 0..loaded-1}.
   *
   * @param store the store, already loaded (or about to be, for a load)
   * @param data keys and values
   * @param loaded number of keys loaded
   */
  public Workload(Store store, Data data, long loaded) {
    this.store = store;
    this.data = data;
    this.loaded = loaded;
    this.zipf = new Zipfian(Math.max(loaded, 2), Zipfian.THETA);
    this.next = new AtomicLong(loaded);
    for (int i = 0; i < MAX_WORKERS; i++) {
      inFlight.set(i, Long.MAX_VALUE);
    }
  }

  /**
   * The store.
   *
   * @return the store
   */
  public Store store() {
    return store;
  }

  /**
   * The keys and values.
   *
   * @return the data
   */
  public Data data() {
    return data;
  }

  /**
   * Keys present now: the loaded ones plus completed inserts.
   *
   * @return the live key count
   */
  public long liveKeys() {
    return next.get();
  }

  /**
   * Puts and deletes made through this workload so far (single puts and the puts of batches): two
   * footprints are comparable only after the same writes.
   *
   * @return the count
   */
  public long writes() {
    return writes.sum();
  }

  /**
   * A per-thread context.
   *
   * @param seed seed of its random numbers
   * @return a worker for one thread
   */
  public Worker worker(long seed) {
    int slot = (int) workers.getAndIncrement();
    if (slot >= MAX_WORKERS) {
      throw new IllegalStateException("at most " + MAX_WORKERS + " workers per workload");
    }
    return new Worker(slot, seed);
  }

  /**
   * Puts keys {@code from, from+step, ...} below {@code to} in a random order with single puts.
   *
   * @param order a permutation of the indices to load
   * @param from first position in {@code order}
   * @param to position after the last
   * @param w the thread's worker
   */
  void fill(long[] order, int from, int to, Worker w) {
    for (int i = from; i < to; i++) {
      w.put(order[i]);
    }
  }

  /** The mutable per-thread state of a workload: random numbers and reusable buffers. */
  public final class Worker {
    private final int slot;
    private final SplittableRandom random;
    private final byte[] key;
    private final byte[] value;
    private final ValueSizes.Drawer sizes;
    private final Map<Integer, Zipfian> lengthZipfians = new HashMap<>();

    Worker(int slot, long seed) {
      this.slot = slot;
      this.random = new SplittableRandom(seed);
      this.key = new byte[data.keySize()];
      this.value = new byte[data.valueSize()];
      this.sizes = data.sizes().drawer();
    }

    /** The array the next value is written into: the reused one, or one of a drawn size. */
    private byte[] nextValue() {
      return data.sizes().fixed() ? value : new byte[sizes.next(random)];
    }

    /**
     * Runs one operation of a scenario's mix: draws the step (when the mix has more than one), then
     * does it with keys of the scenario's distribution.
     *
     * @param s the scenario
     * @return a value derived from what was read, for a JMH blackhole
     * @throws IllegalArgumentException if the scenario has no mix
     */
    public long op(Scenario s) {
      Mix mix = s.mix();
      if (mix.isEmpty()) {
        throw new IllegalArgumentException(s.id() + " is not a per-operation scenario");
      }
      List<Mix.Step> steps = mix.steps();
      return step(steps.size() == 1 ? steps.get(0) : mix.pick(random.nextDouble()), s);
    }

    private long step(Mix.Step step, Scenario s) {
      Scenario.Distribution d = s.distribution();
      return switch (step.operation()) {
        case READ -> read(key(d));
        case MULTIGET -> readAll(step.minLength(), d);
        case UPDATE -> put(key(d));
        case INSERT -> insert();
        case SCAN -> scan(key(d), length(step));
        case READ_MODIFY_WRITE -> readModifyWrite(key(d));
      };
    }

    /**
     * Overwrites a loaded key of a distribution (the writers of churn).
     *
     * @param d the key distribution
     * @return the slot written
     */
    long update(Scenario.Distribution d) {
      return put(key(d));
    }

    /**
     * A key of a distribution, among the loaded ones ({@code latest}: the newest complete).
     *
     * @param d the distribution
     * @return the key index
     */
    long key(Scenario.Distribution d) {
      return switch (d) {
        case UNIFORM -> random.nextLong(loaded);
        case ZIPFIAN -> zipf.scrambled(random.nextDouble());
        case LATEST -> latestKey();
        case YCSB_ZIPFIAN -> Zipfian.YCSB_SCRAMBLED.hashedOnto(loaded, random.nextDouble());
      };
    }

    /**
     * The keys of a scan or multi-get step: its fixed count, or a draw from its range, uniform or
     * zipfian (the shortest most frequent, YCSB's ZipfianGenerator(min, max), not scrambled).
     *
     * @param step the step
     * @return the count
     */
    int length(Mix.Step step) {
      int min = step.minLength();
      int span = step.maxLength() - min + 1;
      if (span == 1) {
        return min;
      }
      if (step.zipfianLengths()) {
        Zipfian z = lengthZipfians.computeIfAbsent(span, n -> new Zipfian(n, Zipfian.THETA));
        return min + (int) z.next(random.nextDouble());
      }
      return min + random.nextInt(span);
    }

    /**
     * Reads {@code n} keys of a distribution with one {@link io.kv4j.Store#getAll} and verifies
     * every value.
     *
     * @return a byte of the last value
     */
    long readAll(int n, Scenario.Distribution d) {
      if (multiKeys == null || multiKeys.length != n) {
        multiKeys = new byte[n][data.keySize()];
        multiIndex = new long[n];
      }
      for (int i = 0; i < n; i++) {
        multiIndex[i] = key(d);
        data.key(multiIndex[i], multiKeys[i]);
      }
      List<byte[]> values = store.getAll(Arrays.asList(multiKeys));
      byte[] v = null;
      for (int i = 0; i < n; i++) {
        v = values.get(i);
        data.verify(multiIndex[i], v);
      }
      return v[v.length - 1];
    }

    private byte[][] multiKeys;
    private long[] multiIndex;

    /**
     * Reads and verifies a key.
     *
     * @param index the key index, which must be present
     * @return a byte of the value
     */
    public long read(long index) {
      data.key(index, key);
      byte[] v = store.get(key);
      data.verify(index, v);
      return v[v.length - 1];
    }

    /**
     * Writes a fresh version of a key.
     *
     * @param index the key index
     * @return the slot written
     */
    public long put(long index) {
      data.key(index, key);
      int s = random.nextInt();
      byte[] v = nextValue();
      data.value(index, s, v);
      store.put(key, v);
      writes.increment();
      return s;
    }

    /**
     * Writes fresh versions of keys {@code order[from..to)} in one {@link WriteBatch}.
     *
     * @param batch a batch to fill and write; cleared first
     * @return the sum of the slots written
     */
    long putBatch(WriteBatch batch, long[] order, int from, int to) {
      batch.clear();
      long sum = 0;
      for (int i = from; i < to; i++) {
        data.key(order[i], key);
        int s = random.nextInt();
        byte[] v = nextValue();
        data.value(order[i], s, v);
        batch.put(key, v); // copies both
        sum += s;
      }
      store.write(batch);
      writes.add(to - from);
      return sum;
    }

    long readModifyWrite(long index) {
      long r = read(index);
      return r + put(index);
    }

    long insert() {
      inFlight.set(slot, next.get());
      long index = next.getAndIncrement();
      inFlight.set(slot, index);
      try {
        return put(index);
      } finally {
        inFlight.set(slot, Long.MAX_VALUE);
      }
    }

    long scan(long start, int count) {
      long vis = visible();
      data.key(start, key);
      long expect = start;
      long sum = 0;
      int n = 0;
      try (Cursor c = store.scan(KeyRange.all().gte(key).limit(count))) {
        while (c.hasNext()) {
          Entry e = c.next();
          long idx = Data.indexOf(e.key());
          // Below the visible mark every key exists, so a scan must return them consecutively.
          if (idx < vis ? idx != expect : idx < expect) {
            throw new Data.VerificationException(
                "scan from key " + start + ": got key " + idx + ", expected " + expect);
          }
          data.verify(idx, e.value());
          expect = idx + 1;
          sum += e.value()[0];
          n++;
        }
      }
      if (n < Math.min(count, vis - start)) {
        throw new Data.VerificationException(
            "scan from key " + start + " limit " + count + " returned only " + n + " entries");
      }
      return sum + n;
    }

    private long latestKey() {
      long max = visible();
      long k = max - 1 - zipf.next(random.nextDouble());
      return k < 0 ? random.nextLong(max) : k;
    }

    /** Keys 0..visible()-1 are all present: no insert below that index is still running. */
    private long visible() {
      long limit = next.get();
      long n = workers.get();
      for (int i = 0; i < n; i++) {
        limit = Math.min(limit, inFlight.get(i));
      }
      return limit;
    }
  }
}
