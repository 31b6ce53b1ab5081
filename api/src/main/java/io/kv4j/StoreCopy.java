package io.kv4j;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/**
 * Copies every entry of one store into another, whatever the two engines are: the migration from
 * one engine to another as one call.
 *
 * <pre>{@code
 * try (Store from = Stores.open("sqlite:/data/old");
 *     Store to = Stores.open("hashlog:/data/new?durability=buffered")) {
 *   StoreCopy.Result r = StoreCopy.copy(from, to, StoreCopy.Options.defaults());
 *   if (!r.verified()) {
 *     throw new IllegalStateException("copy differs: " + r);
 *   }
 * }
 * }</pre>
 *
 * <p>Entries are read with one ascending scan of the source (it needs {@link Feature#ORDERED_SCAN})
 * and written in batches: with {@link Store#write(WriteBatch)} when the target has {@link
 * Feature#ATOMIC_BATCH}, else with one put per entry, always in ascending key order. So after an
 * interruption (an exception, a killed process) the target holds a prefix of the source in key
 * order, and {@link Options#resume(boolean) resume} continues from the target's highest key. The
 * target is synced at the end, then both sides are scanned again and their {@link
 * #checksum(ReadView) checksums} compared.
 *
 * <p>A source with named keyspaces ({@link Feature#KEYSPACES}) is copied whole: its own keys, then
 * each keyspace into the target's keyspace of the same name (the target must support keyspaces,
 * else nothing is copied and {@link UnsupportedOperationException} says why). Each keyspace is read
 * at its own point in time.
 *
 * <p>The source is a {@link ReadView}: a {@link Store}, or a {@link Snapshot}, which copies the
 * store as it was when the snapshot was taken while the store keeps changing (a snapshot has no
 * keyspaces: only its store's own keys are copied).
 *
 * <p>Resume assumes the target received nothing but this copy; anything else shows up as a checksum
 * mismatch. A source store should not change during the copy: its checksum is taken after the copy,
 * so a concurrent write shows up as a mismatch too.
 */
public final class StoreCopy {
  private StoreCopy() {}

  /**
   * Copies every entry of {@code from} into {@code to}, then verifies counts and checksums unless
   * {@link Options#verify(boolean)} is off.
   *
   * @param from the source, a store or a snapshot, read with an ascending scan
   * @param to the target
   * @param options batch sizes, resume, verification, progress listener
   * @return what was copied and the two checksums
   * @throws IllegalStateException if the target is not empty and resume is off
   * @throws UnsupportedOperationException if the source cannot scan in key order
   * @throws RuntimeException whatever the listener or the stores throw; the target then holds a
   *     prefix of the source in key order and the copy can be resumed
   */
  public static Result copy(ReadView from, Store to, Options options) {
    Objects.requireNonNull(from, "from");
    Objects.requireNonNull(to, "to");
    Objects.requireNonNull(options, "options");
    if (from == to) {
      throw new IllegalArgumentException("cannot copy a store into itself");
    }
    long start = System.nanoTime();
    Store source = from instanceof Store s ? s : null; // null: a snapshot, which has no keyspaces
    List<String> spaces = source == null ? List.of() : keyspaces(source);
    if (!spaces.isEmpty() && !to.info().has(Feature.KEYSPACES)) {
      // Copying only the store's own keys would silently leave the keyspaces behind.
      throw new UnsupportedOperationException(
          "source "
              + source.info().describe()
              + " has keyspaces "
              + spaces
              + " but target "
              + to.info().describe()
              + " does not support "
              + Feature.KEYSPACES
              + ": they would not be copied; choose a target engine with keyspaces");
    }
    if (!options.resume) {
      requireEmpty(to);
    }
    Progressed p =
        new Progressed(options, start, source == null ? -1 : expectedEntries(source, spaces));
    copyKeys(from, to, options, p, true);
    for (String name : spaces) {
      try (Store f = source.keyspace(name);
          Store t = to.keyspace(name)) {
        copyKeys(f, t, options, p, false);
      }
    }
    to.sync();
    p.report(true);
    Checksum fromSum = null;
    Checksum toSum = null;
    if (options.verify) {
      fromSum = p.streamed != null && spaces.isEmpty() ? p.streamed.result() : checksum(from);
      toSum = checksum(to);
    }
    return new Result(
        p.copied, p.bytes, p.resumedFrom, p.skipped, fromSum, toSum, System.nanoTime() - start);
  }

  /**
   * Salvages a damaged store into {@code to}: every intact entry {@link
   * io.kv4j.spi.StoreProvider#salvage(StoreConfig, io.kv4j.spi.SalvageSink) the source's engine}
   * can read, written in batches (keyspaces into the target's keyspaces of the same name), then the
   * target is synced. The source is opened by its engine's salvage, read-only, and never written.
   *
   * <pre>{@code
   * try (Store to = Stores.open("hashlog:/data/rescued")) {
   *   StoreCopy.Salvaged r = StoreCopy.salvage(StoreConfig.parse("hashlog:/data/broken"), to,
   *       StoreCopy.Options.defaults());
   *   r.damage().forEach(d -> System.err.println("lost: " + d.describe()));
   * }
   * }</pre>
   *
   * <p>Entries arrive in the engine's order, not key order, so an interrupted salvage cannot be
   * resumed: start again into an empty target. {@link Options#resume(boolean) resume} and {@link
   * Options#verify(boolean) verify} are ignored (there is no intact source to compare with).
   *
   * @param from where the damaged store is; its engine must support salvage
   * @param to the target, empty
   * @param options batch sizes and progress listener
   * @return the entries written and every damaged region the source's engine stepped over
   * @throws IllegalStateException if the target is not empty
   * @throws UnsupportedOperationException if the source's engine cannot salvage, or the source has
   *     keyspaces and the target has no {@link Feature#KEYSPACES}
   * @throws IllegalArgumentException if {@code from} names no installed engine
   */
  public static Salvaged salvage(StoreConfig from, Store to, Options options) {
    Objects.requireNonNull(from, "from");
    Objects.requireNonNull(to, "to");
    Objects.requireNonNull(options, "options");
    requireEmpty(to);
    long start = System.nanoTime();
    StoreConfig source = from.toBuilder().readOnly(true).createIfMissing(false).build();
    SalvageWriter w = new SalvageWriter(to, options, start);
    List<DamagedRegion> damage;
    try {
      damage = List.copyOf(from.provider().salvage(source, w::entry));
      w.flushAll();
    } finally {
      w.closeKeyspaces();
    }
    to.sync();
    w.report(true);
    return new Salvaged(
        w.entries, w.bytes, List.copyOf(w.spaces.keySet()), damage, System.nanoTime() - start);
  }

  /** Batches salvaged entries per keyspace into the target. */
  private static final class SalvageWriter {
    final Store to;
    final Options options;
    final long start;
    final java.util.Map<String, Store> spaces = new java.util.TreeMap<>();
    final java.util.Map<String, WriteBatch> pending = new java.util.HashMap<>();
    final java.util.Map<String, long[]> pendingSize = new java.util.HashMap<>();
    long entries;
    long bytes;

    SalvageWriter(Store to, Options options, long start) {
      this.to = to;
      this.options = options;
      this.start = start;
    }

    void entry(String keyspace, byte[] key, byte[] value) {
      String name = keyspace == null ? "" : keyspace;
      Store target = keyspace == null ? to : spaces.get(name);
      if (target == null) {
        if (!to.info().has(Feature.KEYSPACES)) {
          throw new UnsupportedOperationException(
              "the damaged store has keyspace '"
                  + keyspace
                  + "' but target "
                  + to.info().describe()
                  + " does not support "
                  + Feature.KEYSPACES
                  + "; choose a target engine with keyspaces");
        }
        target = to.keyspace(keyspace);
        spaces.put(name, target);
      }
      if (!target.info().has(Feature.ATOMIC_BATCH)) {
        target.put(key, value);
        count(key, value);
        return;
      }
      WriteBatch b = pending.computeIfAbsent(name, n -> new WriteBatch());
      long[] size = pendingSize.computeIfAbsent(name, n -> new long[2]);
      b.put(key, value);
      size[0]++;
      size[1] += key.length + value.length;
      if (size[0] >= options.batchEntries || size[1] >= options.batchBytes) {
        flush(name, target);
      }
    }

    private void count(byte[] key, byte[] value) {
      entries++;
      bytes += key.length + value.length;
    }

    private void flush(String name, Store target) {
      WriteBatch b = pending.remove(name);
      long[] size = pendingSize.remove(name);
      if (b == null || size[0] == 0) {
        return;
      }
      target.write(b);
      entries += size[0];
      bytes += size[1];
      report(false);
    }

    void flushAll() {
      flush("", to);
      for (var e : spaces.entrySet()) {
        flush(e.getKey(), e.getValue());
      }
    }

    void closeKeyspaces() {
      for (Store s : spaces.values()) {
        if (s != to) {
          s.close();
        }
      }
    }

    void report(boolean done) {
      if (options.listener != null) {
        options.listener.progress(
            new Progress(entries, 0, bytes, -1, System.nanoTime() - start, false, done));
      }
    }
  }

  /**
   * What a {@link #salvage(StoreConfig, Store, Options) salvage} wrote and what it lost.
   *
   * @param entries entries written to the target, over all keyspaces
   * @param bytes key and value bytes written
   * @param keyspaces the named keyspaces written to
   * @param damage every damaged region the source's engine stepped over; empty if it found none
   * @param elapsedNanos how long it took
   */
  public record Salvaged(
      long entries,
      long bytes,
      List<String> keyspaces,
      List<DamagedRegion> damage,
      long elapsedNanos) {

    /**
     * Whether the source had no damage the engine could find.
     *
     * @return true if {@link #damage()} is empty
     */
    public boolean intact() {
      return damage.isEmpty();
    }
  }

  /** The running totals of one copy, over the store's own keys and its keyspaces. */
  private static final class Progressed {
    final Options options;
    final long start;
    final long expected;
    long copied;
    long bytes;
    long skipped;
    byte[] resumedFrom;
    boolean resumed;
    Digest streamed; // of the store's own keys, for a fresh copy: saves scanning them again

    Progressed(Options options, long start, long expected) {
      this.options = options;
      this.start = start;
      this.expected = expected;
    }

    void report(boolean done) {
      if (options.listener != null) {
        options.listener.progress(
            new Progress(
                skipped + copied,
                skipped,
                bytes,
                expected < 0 ? -1 : Math.max(expected, skipped + copied),
                System.nanoTime() - start,
                resumed,
                done));
      }
    }
  }

  /** Copies one keyspace's keys (or the store's own), resuming after the target's highest key. */
  private static void copyKeys(
      ReadView from, Store to, Options options, Progressed p, boolean own) {
    byte[] resumeKey = highestKey(to);
    if (resumeKey != null) {
      if (!options.resume) {
        throw new IllegalStateException(
            "target "
                + to.info().describe()
                + " is not empty; copy into an empty store, or resume an interrupted copy");
      }
      StoreStats ts = to.stats();
      // The highest key is copied again, so it does not count as done.
      p.skipped += ts.keyCountExact() ? Math.max(0, ts.keyCount() - 1) : 0;
      if (!p.resumed) {
        p.resumed = true;
        p.resumedFrom = resumeKey;
      }
    }
    boolean atomic = to.info().has(Feature.ATOMIC_BATCH);
    KeyRange range = resumeKey == null ? KeyRange.all() : KeyRange.all().gte(resumeKey);
    Digest streamed = own && resumeKey == null ? new Digest() : null;
    p.streamed = streamed;
    WriteBatch batch = new WriteBatch();
    long entries = 0;
    // A snapshot, where the engine has one, makes the copy one point in time of a source store that
    // others keep writing (a postgres table other applications share); the cursor of a
    // SNAPSHOT_SCAN engine already is one, and so is a snapshot given as the source.
    Snapshot snapshot =
        from instanceof Store s
                && s.info().has(Feature.SNAPSHOT_READ)
                && !s.info().has(Feature.SNAPSHOT_SCAN)
            ? s.snapshot()
            : null;
    ReadView reads = snapshot != null ? snapshot : from;
    try (snapshot;
        Cursor c = reads.scan(range)) {
      while (c.hasNext()) {
        Entry e = c.next();
        if (streamed != null) {
          streamed.add(e);
        }
        if (atomic) {
          batch.put(e.key(), e.value());
        } else {
          to.put(e.key(), e.value());
        }
        entries++;
        p.copied++;
        p.bytes += e.key().length + e.value().length;
        if (entries % options.batchEntries == 0 || batch.byteSize() >= options.batchBytes) {
          flush(to, batch);
          p.report(false);
        }
      }
    }
    flush(to, batch);
  }

  private static void requireEmpty(Store to) {
    List<String> notEmpty = new java.util.ArrayList<>();
    if (highestKey(to) != null) {
      notEmpty.add(Store.DEFAULT_KEYSPACE);
    }
    for (String name : keyspaces(to)) {
      try (Store ks = to.keyspace(name)) {
        if (highestKey(ks) != null) {
          notEmpty.add(name);
        }
      }
    }
    if (!notEmpty.isEmpty()) {
      throw new IllegalStateException(
          "target "
              + to.info().describe()
              + " is not empty (keys in "
              + notEmpty
              + "); copy into an empty store, or resume an interrupted copy");
    }
  }

  private static List<String> keyspaces(Store store) {
    return store.info().has(Feature.KEYSPACES) ? store.keyspaces() : List.of();
  }

  private static long expectedEntries(Store from, List<String> spaces) {
    long n = from.stats().keyCount();
    for (String name : spaces) {
      if (n < 0) {
        break;
      }
      try (Store ks = from.keyspace(name)) {
        long k = ks.stats().keyCount();
        n = k < 0 ? -1 : n + k;
      }
    }
    return n;
  }

  /**
   * Checksums a store or a snapshot: SHA-256 over every entry in ascending key order (each as key
   * length, key, value length, value), with the entry count and payload bytes; then, for a store
   * with named keyspaces, each keyspace in name order (its name, then its entries). Two stores with
   * equal checksums hold the same entries in the same keyspaces. A snapshot has no keyspaces: its
   * checksum equals that of its store, had the store no keyspaces, at the moment the snapshot was
   * taken.
   *
   * @param view the store or snapshot, read with one ascending scan per keyspace
   * @return the checksum
   */
  public static Checksum checksum(ReadView view) {
    Objects.requireNonNull(view, "view");
    Digest d = new Digest();
    digest(view, d);
    if (view instanceof Store store) {
      for (String name : keyspaces(store)) {
        d.keyspace(name);
        try (Store ks = store.keyspace(name)) {
          digest(ks, d);
        }
      }
    }
    return d.result();
  }

  private static void digest(ReadView view, Digest d) {
    try (Cursor c = view.scan(KeyRange.all())) {
      while (c.hasNext()) {
        d.add(c.next());
      }
    }
  }

  private static byte[] highestKey(Store store) {
    if (store.info().has(Feature.REVERSE_SCAN)) {
      try (Cursor c = store.scan(KeyRange.all().reverse().limit(1))) {
        return c.hasNext() ? c.next().key() : null;
      }
    }
    byte[] last = null;
    try (Cursor c = store.scan(KeyRange.all())) {
      while (c.hasNext()) {
        last = c.next().key();
      }
    }
    return last;
  }

  private static void flush(Store to, WriteBatch batch) {
    if (!batch.isEmpty()) {
      to.write(batch);
      batch.clear();
    }
  }

  /** Running SHA-256 over entries. */
  private static final class Digest {
    private final MessageDigest sha;
    private final ByteBuffer len = ByteBuffer.allocate(4);
    private long entries;
    private long bytes;

    Digest() {
      try {
        sha = MessageDigest.getInstance("SHA-256");
      } catch (NoSuchAlgorithmException e) {
        throw new IllegalStateException("SHA-256 is required on every Java platform", e);
      }
    }

    void add(Entry e) {
      field(e.key());
      field(e.value());
      entries++;
      bytes += e.key().length + e.value().length;
    }

    /** Marks the start of a keyspace: a length no key can have (-1), then its name. */
    void keyspace(String name) {
      len.clear();
      len.putInt(-1);
      sha.update(len.array());
      field(name.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    private void field(byte[] b) {
      len.clear();
      len.putInt(b.length);
      sha.update(len.array());
      sha.update(b);
    }

    Checksum result() {
      return new Checksum(entries, bytes, HexFormat.of().formatHex(sha.digest()));
    }
  }

  /**
   * How to copy. Immutable: each method returns a changed copy.
   *
   * <p>Defaults: batches of 1000 entries or 4 MiB, whichever fills first; no resume; verification
   * on; no listener.
   */
  public static final class Options {
    private static final Options DEFAULTS = new Options(1000, 4L << 20, false, true, null);

    private final int batchEntries;
    private final long batchBytes;
    private final boolean resume;
    private final boolean verify;
    private final Listener listener;

    private Options(
        int batchEntries, long batchBytes, boolean resume, boolean verify, Listener listener) {
      this.batchEntries = batchEntries;
      this.batchBytes = batchBytes;
      this.resume = resume;
      this.verify = verify;
      this.listener = listener;
    }

    /**
     * The defaults.
     *
     * @return batches of 1000 entries or 4 MiB, no resume, verification on, no listener
     */
    public static Options defaults() {
      return DEFAULTS;
    }

    /**
     * Sets the largest number of entries per batch.
     *
     * @param n entries per batch, {@code >= 1}
     * @return changed options
     * @throws IllegalArgumentException if n is below 1
     */
    public Options batchEntries(int n) {
      if (n < 1) {
        throw new IllegalArgumentException("batchEntries must be >= 1, got " + n);
      }
      return new Options(n, batchBytes, resume, verify, listener);
    }

    /**
     * Sets the payload size (keys plus values) at which a batch is written even if it has fewer
     * entries than {@link #batchEntries(int)}.
     *
     * @param bytes bytes per batch, {@code >= 1}
     * @return changed options
     * @throws IllegalArgumentException if bytes is below 1
     */
    public Options batchBytes(long bytes) {
      if (bytes < 1) {
        throw new IllegalArgumentException("batchBytes must be >= 1, got " + bytes);
      }
      return new Options(batchEntries, bytes, resume, verify, listener);
    }

    /**
     * Whether a non-empty target is taken as an interrupted copy: the copy then continues from the
     * target's highest key. When off, a non-empty target is an error.
     *
     * @param resume true to resume
     * @return changed options
     */
    public Options resume(boolean resume) {
      return new Options(batchEntries, batchBytes, resume, verify, listener);
    }

    /**
     * Whether both stores are checksummed after the copy.
     *
     * @param verify true to verify
     * @return changed options
     */
    public Options verify(boolean verify) {
      return new Options(batchEntries, batchBytes, resume, verify, listener);
    }

    /**
     * Sets who is told of progress, after each batch and once at the end. A listener that throws
     * stops the copy; the exception propagates and the copy can be resumed.
     *
     * @param listener the listener, or null for none
     * @return changed options
     */
    public Options listener(Listener listener) {
      return new Options(batchEntries, batchBytes, resume, verify, listener);
    }

    @Override
    public String toString() {
      return "StoreCopy.Options[batchEntries="
          + batchEntries
          + ", batchBytes="
          + batchBytes
          + ", resume="
          + resume
          + ", verify="
          + verify
          + "]";
    }
  }

  /** Told of a copy's progress. */
  @FunctionalInterface
  public interface Listener {
    /**
     * Called after each batch is written and once when every entry is written.
     *
     * @param progress the figures so far
     */
    void progress(Progress progress);
  }

  /**
   * A copy's figures at one moment.
   *
   * @param entries entries in the target so far, counting those present before a resume when the
   *     target's count is exact
   * @param skippedEntries entries already in the target when this call resumed (0 if unknown)
   * @param bytes key and value bytes written by this call
   * @param expectedEntries the source's key count (possibly an estimate), or -1 when unknown
   * @param elapsedNanos time since the copy started
   * @param resumed whether this call resumed an interrupted copy
   * @param done whether every entry has been written
   */
  public record Progress(
      long entries,
      long skippedEntries,
      long bytes,
      long expectedEntries,
      long elapsedNanos,
      boolean resumed,
      boolean done) {

    /**
     * The fraction done.
     *
     * @return 0..1, or -1 when the expected count is unknown
     */
    public double fraction() {
      if (done) {
        return 1;
      }
      if (expectedEntries <= 0) {
        return expectedEntries == 0 ? 1 : -1;
      }
      return Math.min(1, (double) entries / expectedEntries);
    }

    /**
     * Bytes written per second by this call.
     *
     * @return the rate, 0 before any time has passed
     */
    public double bytesPerSecond() {
      return elapsedNanos <= 0 ? 0 : bytes * 1e9 / elapsedNanos;
    }

    /**
     * Entries written per second by this call.
     *
     * @return the rate, 0 before any time has passed
     */
    public double entriesPerSecond() {
      return elapsedNanos <= 0 ? 0 : (entries - skippedEntries) * 1e9 / elapsedNanos;
    }

    /**
     * Estimated time to completion from this call's rate so far.
     *
     * @return nanoseconds left, 0 when done, -1 when unknown
     */
    public long etaNanos() {
      if (done) {
        return 0;
      }
      double rate = entriesPerSecond();
      if (expectedEntries < 0 || rate <= 0) {
        return -1;
      }
      return (long) (Math.max(0, expectedEntries - entries) / rate * 1e9);
    }
  }

  /**
   * A store's content in brief.
   *
   * @param entries number of entries
   * @param bytes sum of key and value lengths
   * @param sha256 SHA-256 of the entries in key order, as lowercase hex
   */
  public record Checksum(long entries, long bytes, String sha256) {}

  /**
   * What a copy did.
   *
   * @param copiedEntries entries written by this call
   * @param copiedBytes key and value bytes written by this call
   * @param resumedFrom the target's highest key when the copy resumed (it is written again), null
   *     for a fresh copy
   * @param skippedEntries entries already in the target when the copy resumed (0 if unknown)
   * @param source the source's checksum, null when verification was off
   * @param target the target's checksum, null when verification was off
   * @param elapsedNanos how long the copy and the verification took
   */
  public record Result(
      long copiedEntries,
      long copiedBytes,
      byte[] resumedFrom,
      long skippedEntries,
      Checksum source,
      Checksum target,
      long elapsedNanos) {

    /**
     * Whether both checksums were taken and are equal: same count, same bytes, same digest.
     *
     * @return true if the target holds exactly the source's entries
     */
    public boolean verified() {
      return source != null && source.equals(target);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Result r
          && copiedEntries == r.copiedEntries
          && copiedBytes == r.copiedBytes
          && Arrays.equals(resumedFrom, r.resumedFrom)
          && skippedEntries == r.skippedEntries
          && Objects.equals(source, r.source)
          && Objects.equals(target, r.target)
          && elapsedNanos == r.elapsedNanos;
    }

    @Override
    public int hashCode() {
      return Objects.hash(
          copiedEntries,
          copiedBytes,
          Arrays.hashCode(resumedFrom),
          skippedEntries,
          source,
          target,
          elapsedNanos);
    }

    @Override
    public String toString() {
      return "StoreCopy.Result[copied "
          + copiedEntries
          + " entries, "
          + copiedBytes
          + " bytes"
          + (resumedFrom == null ? "" : ", resumed from " + HexFormat.of().formatHex(resumedFrom))
          + ", source "
          + source
          + ", target "
          + target
          + "]";
    }
  }
}
