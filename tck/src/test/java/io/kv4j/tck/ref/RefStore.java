package io.kv4j.tck.ref;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Snapshot;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreLockedException;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.kv4j.spi.DirectoryLock;
import io.kv4j.spi.StoreDirectory;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.zip.CRC32C;

/**
 * A TreeMap plus a redo log, {@code data.log}, in a directory opened through {@link StoreDirectory}
 * (identity file, lock, create rules). Simple on purpose; correctness is what it is for.
 *
 * <p>Log format (big-endian):
 *
 * <table>
 *   <caption>data.log</caption>
 *   <tr><th>offset</th><th>width</th><th>field</th></tr>
 *   <tr><td>0</td><td>8</td><td>magic {@code KV4JREF3} (a {@code KV4JREF2} log, written before
 *       keyspaces, is read too: its records use op codes 0 and 1 only; an open for writing
 *       rewrites the header with the new magic)</td></tr>
 *   <tr><td>8</td><td>8</td><td>clean length: the file's length at its last clean close, or -1
 *       while a writer has it open (and after a crash)</td></tr>
 *   <tr><td>16</td><td>4</td><td>CRC32C of bytes 0-15</td></tr>
 *   <tr><td>20</td><td>...</td><td>records: [int payload length n][int CRC32C of the length field
 *       and the payload][n bytes payload = int count, count x operation]</td></tr>
 * </table>
 *
 * <table>
 *   <caption>an operation in a record's payload</caption>
 *   <tr><th>op</th><th>what</th><th>then</th></tr>
 *   <tr><td>0</td><td>put into the store's own keys</td><td>int keyLength, key, int
 *       valueLength, value</td></tr>
 *   <tr><td>1</td><td>delete from the store's own keys</td><td>int keyLength, key</td></tr>
 *   <tr><td>2</td><td>put into a named keyspace (created if absent)</td><td>byte nameLength,
 *       name (ASCII), int keyLength, key, int valueLength, value</td></tr>
 *   <tr><td>3</td><td>delete from a named keyspace (created if absent)</td><td>byte nameLength,
 *       name, int keyLength, key</td></tr>
 *   <tr><td>4</td><td>create a named keyspace (no-op if present)</td><td>byte nameLength,
 *       name</td></tr>
 *   <tr><td>5</td><td>drop a named keyspace and its keys</td><td>byte nameLength, name</td></tr>
 * </table>
 *
 * <p>One record per put, delete, batch, keyspace creation or drop, so a batch is atomic across
 * crashes, also one spanning keyspaces. Keyspaces ({@link Feature#KEYSPACES}) are TreeMaps by name
 * beside the store's own; a handle ({@link RefKeyspace}) reads and writes them through the store,
 * under its lock, and a backup or compaction carries every keyspace, also an empty one. Every
 * record is checked at open, and the whole map lives in memory, so every read returns checked bytes
 * ({@link io.kv4j.Feature#CHECKSUMS}). Recovery: after a clean close (clean length set) the file
 * must be exactly that long and every record whole, otherwise the open fails with {@link
 * StoreCorruptedException} and changes nothing — damage is never mistaken for a torn tail. After a
 * crash (clean length -1) the first record that fails its check ends the log: a torn tail,
 * truncated by a read-write open. {@link #compact()} writes the live entries to {@code
 * data.log.compact} and renames it over the log. With {@code BUFFERED}, a background flusher thread
 * forces a log that grew every 100 ms; while its flushes fail the store is {@code DEGRADED} and
 * {@link #verify()} throws {@link StoreIOException} (the kit's rule 10.15).
 */
final class RefStore implements Store {
  static final String LOG = "data.log";
  static final String COMPACTING = "data.log.compact";
  private static final byte[] MAGIC = "KV4JREF3".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] MAGIC_BEFORE_KEYSPACES =
      "KV4JREF2".getBytes(StandardCharsets.US_ASCII);
  private static final byte PUT = 0;
  private static final byte DELETE = 1;
  private static final byte PUT_IN = 2;
  private static final byte DELETE_IN = 3;
  private static final byte CREATE = 4;
  private static final byte DROP = 5;
  private static final int HEADER = 20;
  private static final long DIRTY = -1;

  /** The directories open read-write in this JVM, for JVM_LOCAL_LOCK. */
  private static final Set<Path> LOCAL_LOCKS = java.util.concurrent.ConcurrentHashMap.newKeySet();

  private final Defect defect;

  /** The deliberate defect this store runs with ({@link Defect#NONE}: none). */
  Defect defect() {
    return defect;
  }

  private int racyCount; // RACY_KEY_COUNT: updated with a plain read-yield-write outside the lock
  // TRANSIENT_KEY_COUNT: puts counted before the write, corrected after it
  private final java.util.concurrent.atomic.AtomicLong transientCount =
      new java.util.concurrent.atomic.AtomicLong();
  private final Object logLock = new Object(); // SPLIT_LOCKS: the log's own lock
  private final StoreInfo info;
  private final StoreDirectory directory; // null for the defects that bypass it
  private final DirectoryLock lock; // only when bypassing StoreDirectory
  private FileChannel log; // replaced by compact(); used under the store's monitor
  private final Path logFile;
  private final List<RefCursor> cursors = new ArrayList<>();
  private final ByteArrayOutputStream pending = new ByteArrayOutputStream();
  private volatile TreeMap<byte[], byte[]> map; // the store's own keys

  /** The named keyspaces' keys, by name; guarded by the store's monitor. */
  private final TreeMap<String, TreeMap<byte[], byte[]>> named = new TreeMap<>();

  /** DROP_KEEPS_KEYS: dropped names whose keys stayed; guarded by the store's monitor. */
  private final Set<String> forgotten = new java.util.HashSet<>();

  /** The open keyspace handles; guarded by the store's monitor. */
  private final List<RefKeyspace> handles = new ArrayList<>();

  private volatile boolean closed;

  /**
   * BUFFERED, read-write: the background flusher, which forces the log every {@link
   * #FLUSH_INTERVAL_NANOS} when it grew; null otherwise.
   */
  private volatile Thread flusher;

  /** Set by {@link RefProvider#failBackgroundWork}: every later background flush fails. */
  private volatile boolean failBackground;

  /** Why background flushes fail (the store is DEGRADED), or null while they work. */
  private volatile IOException backgroundFailure;

  /** How often the background flusher forces a log that grew (BUFFERED). */
  private static final long FLUSH_INTERVAL_NANOS =
      java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(100);

  private final AtomicLong writes =
      new AtomicLong(); // for STALLED_WRITES, DEADLOCKED_WRITES, WRITE_FAILS
  private final List<RefSnapshot> snapshots = new ArrayList<>(); // guarded by cursors' monitor
  private long syncedLength; // the log's length at open or at the last sync, for BACKUP_FROM_...

  /** REPLAYED_PUT: the calling thread's last put of the store's own keys, to land again. */
  private final ThreadLocal<WriteBatch> replayed = new ThreadLocal<>();

  /**
   * STALE_READ_CACHE: the values get read, by key (an empty Optional for absent); a write drops its
   * keys before it takes the store's lock.
   */
  private final Map<ByteBuffer, java.util.Optional<byte[]>> readCache =
      new java.util.concurrent.ConcurrentHashMap<>();

  /** GETALL_CACHES_ABSENT: the keys a getAll found absent, never forgotten. */
  private final Set<ByteBuffer> knownAbsent = java.util.concurrent.ConcurrentHashMap.newKeySet();

  /** For DEADLOCKED_WRITES: a lock held, from first use on, by a thread that never lets it go. */
  private static java.util.concurrent.locks.ReentrantLock neverReleased;

  private static synchronized java.util.concurrent.locks.ReentrantLock neverReleased() {
    if (neverReleased == null) {
      java.util.concurrent.locks.ReentrantLock lock =
          new java.util.concurrent.locks.ReentrantLock();
      Thread holder =
          new Thread(
              () -> {
                lock.lock();
                while (true) {
                  LockSupport.park();
                }
              },
              "ref-never-releases");
      holder.setDaemon(true);
      holder.start();
      while (!lock.isLocked()) {
        Thread.onSpinWait(); // the holder takes it first, so a writer's lock() never returns
      }
      neverReleased = lock;
    }
    return neverReleased;
  }

  private RefStore(
      StoreInfo info,
      Defect defect,
      StoreDirectory directory,
      DirectoryLock lock,
      FileChannel log,
      Path logFile) {
    this.info = info;
    this.defect = defect;
    this.directory = directory;
    this.lock = lock;
    this.log = log;
    this.logFile = logFile;
    Comparator<byte[]> order =
        defect == Defect.SIGNED_ORDER ? Arrays::compare : Arrays::compareUnsigned;
    this.map = new TreeMap<>(order);
  }

  static RefStore open(StoreConfig config, Defect defect, String id, Set<Feature> features) {
    if (defect == Defect.NO_LOCK
        || defect == Defect.IGNORES_IDENTITY
        || defect == Defect.JVM_LOCAL_LOCK) {
      return openWithoutIdentity(config, defect, id, features);
    }
    StoreDirectory dir =
        StoreDirectory.open(
            config,
            new StoreDirectory.Layout(
                id,
                1,
                n -> n.equals(LOG) || n.equals(COMPACTING),
                defect == Defect.MISSING_LOG_AS_NEW_STORE ? Set.of() : Set.of(LOG)));
    boolean ok = false;
    try {
      RefStore s = openIn(dir.path(), dir.isNew(), config, defect, dir, null, id, features);
      ok = true;
      return s;
    } finally {
      if (!ok) {
        dir.close(); // also for an Error
      }
    }
  }

  /** The pre-identity way, kept for the defects that need it: no identity, maybe no lock. */
  private static RefStore openWithoutIdentity(
      StoreConfig config, Defect defect, String id, Set<Feature> features) {
    Path dir = config.path();
    try {
      if (!Files.isDirectory(dir)) {
        if (!config.createIfMissing() || config.readOnly()) {
          throw new StoreIOException(
              "engine 'ref': directory " + dir + " does not exist", new IOException("missing"));
        }
        Files.createDirectories(dir);
      }
    } catch (IOException e) {
      throw new StoreIOException("engine 'ref': cannot create " + dir, e);
    }
    DirectoryLock lock =
        defect == Defect.NO_LOCK || defect == Defect.JVM_LOCAL_LOCK || config.readOnly()
            ? null
            : DirectoryLock.acquire(dir, "ref");
    Path local = dir.toAbsolutePath().normalize();
    if (defect == Defect.JVM_LOCAL_LOCK && !config.readOnly() && !LOCAL_LOCKS.add(local)) {
      throw new StoreLockedException(
          "engine 'ref': " + dir + " is open in this JVM (a lock that sees only this JVM)", dir);
    }
    boolean ok = false;
    try {
      RefStore s =
          openIn(dir, !Files.exists(dir.resolve(LOG)), config, defect, null, lock, id, features);
      ok = true;
      return s;
    } finally {
      if (!ok && lock != null) {
        lock.close();
      }
      if (!ok && defect == Defect.JVM_LOCAL_LOCK && !config.readOnly()) {
        LOCAL_LOCKS.remove(local);
      }
    }
  }

  private static RefStore openIn(
      Path dir,
      boolean isNew,
      StoreConfig config,
      Defect defect,
      StoreDirectory directory,
      DirectoryLock lock,
      String id,
      Set<Feature> features) {
    Path file = dir.resolve(LOG);
    boolean readOnly = config.readOnly();
    try {
      if (!readOnly) {
        Files.deleteIfExists(dir.resolve(COMPACTING)); // a compaction a crash interrupted
      }
      boolean create = isNew;
      if (defect == Defect.MISSING_LOG_AS_NEW_STORE) {
        create |= !Files.exists(file) || Files.size(file) == 0;
      }
      if (!create && !Files.exists(file)) {
        throw new StoreCorruptedException(
            "engine 'ref' at " + dir + ": the log " + file + " is missing", file, -1);
      }
      FileChannel ch =
          readOnly
              ? FileChannel.open(file, StandardOpenOption.READ)
              : FileChannel.open(
                  file,
                  StandardOpenOption.CREATE,
                  StandardOpenOption.READ,
                  StandardOpenOption.WRITE);
      StoreInfo info =
          new StoreInfo(
              id,
              features,
              RefProvider.LIMITS,
              config.durability(),
              config.path().toString(),
              readOnly);
      RefStore s = new RefStore(info, defect, directory, lock, ch, file);
      boolean ok = false;
      try {
        if (create) {
          ch.truncate(0);
          writeFully(ch, header(DIRTY), 0);
          ch.force(true);
          ch.position(HEADER);
          StoreDirectory.syncDirectory(dir);
          if (directory != null) {
            directory.created();
          }
        } else {
          s.recover();
          s.racyCount = s.map.size();
          s.transientCount.set(s.map.size());
        }
        // Not for a handle whose sync() syncs nothing: the flusher's fdatasync every 100 ms would
        // fall between two of 7.9's acks whenever a round is slower than that (strace, a loaded
        // machine), and the broken sync would look durable.
        if (!readOnly
            && config.durability() == Durability.BUFFERED
            && defect != Defect.HANDLE_SYNC_SYNCS_NOTHING) {
          s.startFlusher();
        }
        ok = true;
        return s;
      } finally {
        if (!ok) {
          ch.close();
        }
      }
    } catch (IOException e) {
      throw new StoreIOException("engine 'ref': cannot open " + file + ": " + e, e);
    }
  }

  private static ByteBuffer header(long cleanLength) {
    ByteBuffer h = ByteBuffer.allocate(HEADER);
    h.put(MAGIC).putLong(cleanLength);
    CRC32C c = new CRC32C();
    c.update(h.array(), 0, 16);
    h.putInt((int) c.getValue()).flip();
    return h;
  }

  /** Replays the log into the map; see the class comment for what is damage and what is torn. */
  private void recover() throws IOException {
    long size = log.size();
    if (size > Integer.MAX_VALUE - 64) {
      throw damage("is " + size + " bytes, more than the ref engine ever writes", 0, size);
    }
    ByteBuffer all = readAll(log);
    if (size < HEADER) {
      throw damage("is " + size + " bytes, shorter than its header", 0, size);
    }
    byte[] magic = new byte[MAGIC.length];
    all.get(magic);
    boolean magicOk = Arrays.equals(magic, MAGIC) || Arrays.equals(magic, MAGIC_BEFORE_KEYSPACES);
    long clean = all.getLong();
    CRC32C hc = new CRC32C();
    hc.update(all.array(), 0, 16);
    boolean headerOk = all.getInt() == (int) hc.getValue();
    if ((!magicOk || !headerOk) && defect == Defect.GARBAGE_LOG_AS_NEW_STORE && !info.readOnly()) {
      // The bug: a garbage header taken for a log whose creation a crash interrupted.
      log.truncate(0);
      writeFully(log, header(DIRTY), 0);
      log.force(true);
      log.position(HEADER);
      syncedLength = HEADER;
      return;
    }
    if (!magicOk) {
      throw damage("is not a ref log (bad magic)", 0, size);
    }
    if (!headerOk) {
      throw damage("has a header that fails its checksum", 0, size);
    }
    boolean strict = clean != DIRTY && defect != Defect.SHORT_LOG_AS_TORN_TAIL;
    if (strict && size < clean && defect == Defect.CRASH_ON_SHORT_LOG) {
      // What an engine reading a mapped file past its end suffers: SIGBUS, the JVM aborts.
      Runtime.getRuntime().halt(134);
    }
    long valid = replay(all, map, named, defect != Defect.NO_CHECKSUM_CHECK);
    if (strict && size != clean) {
      throw damage(
          "is "
              + size
              + " bytes, but was "
              + clean
              + " bytes when it was last closed cleanly (truncated or extended since)",
          Math.min(size, clean),
          valid);
    }
    if (strict
        && valid != size
        && defect == Defect.LAST_RECORD_AS_TORN_TAIL
        && lastRecordAt(all, valid)) {
      // The bug: a bad last record taken for a torn write although the store was closed cleanly.
      strict = false;
    }
    if (strict && valid != size) {
      throw damage(
          "has a record at offset "
              + valid
              + " that fails its checksum or has an impossible length",
          valid,
          valid);
    }
    syncedLength = valid;
    if (info.readOnly()) {
      return;
    }
    if (valid != size) {
      log.truncate(valid); // a torn tail: the store was not closed cleanly
    }
    if (defect == Defect.CLEAN_MARKER_KEPT_ON_REOPEN && clean != DIRTY) {
      // The bug: the marker of the last clean close stays while the log grows again.
      log.position(valid);
      return;
    }
    writeFully(log, header(DIRTY), 0);
    log.force(true);
    log.position(valid);
  }

  /**
   * Applies the records after the header to {@code into} and returns the offset just past the last
   * whole record whose checksum matched (or, without {@code check}, whose length fit).
   */
  private static long replay(
      ByteBuffer all,
      TreeMap<byte[], byte[]> into,
      TreeMap<String, TreeMap<byte[], byte[]>> spaces,
      boolean check) {
    all.position(HEADER);
    long valid = HEADER;
    while (all.remaining() >= 8) {
      int at = all.position();
      int len = all.getInt();
      int crc = all.getInt();
      if (len < 4 || len > all.remaining()) {
        break;
      }
      CRC32C c = new CRC32C();
      c.update(all.array(), at, 4);
      c.update(all.array(), at + 8, len);
      if (check && (int) c.getValue() != crc) {
        break;
      }
      byte[] payload = new byte[len];
      all.get(payload);
      apply(ByteBuffer.wrap(payload), into, spaces);
      valid = all.position();
    }
    return valid;
  }

  /** Whether the record at {@code at} is whole by its length field and ends the log. */
  private static boolean lastRecordAt(ByteBuffer all, long at) {
    if (all.limit() - at < 8) {
      return true;
    }
    int len = all.getInt((int) at);
    return len >= 4 && at + 8 + len == all.limit();
  }

  private static ByteBuffer readAll(FileChannel ch) throws IOException {
    ByteBuffer all = ByteBuffer.allocate((int) ch.size());
    while (all.hasRemaining() && ch.read(all, all.position()) > 0) {}
    all.flip();
    return all;
  }

  /** The failure for damage found at open, with this engine's deliberate mishandlings of it. */
  private RuntimeException damage(String what, long offset, long validEnd) throws IOException {
    if (defect == Defect.HANG_ON_DAMAGE) {
      hangForever();
    }
    if (defect == Defect.SHRINKS_ON_FAILED_OPEN && !info.readOnly()) {
      log.truncate(validEnd);
    }
    String msg =
        "engine 'ref': the log "
            + logFile
            + " "
            + what
            + " (offset "
            + offset
            + "); refusing to open rather than lose acknowledged writes";
    if (defect == Defect.DAMAGE_AS_ILLEGAL_STATE) {
      return new IllegalStateException(msg);
    }
    return new StoreCorruptedException(msg, logFile, offset);
  }

  private static void hangForever() {
    for (; ; ) {
      LockSupport.parkNanos(1_000_000_000L);
    }
  }

  private static void apply(
      ByteBuffer p, TreeMap<byte[], byte[]> own, TreeMap<String, TreeMap<byte[], byte[]>> spaces) {
    int n = p.getInt();
    for (int i = 0; i < n; i++) {
      byte op = p.get();
      TreeMap<byte[], byte[]> m = own;
      if (op >= PUT_IN && op <= DROP) { // any other op reads as a delete (as before keyspaces)
        byte[] name = new byte[p.get()];
        p.get(name);
        String ks = new String(name, StandardCharsets.US_ASCII);
        if (op == DROP) {
          spaces.remove(ks);
          continue;
        }
        m = spaces.computeIfAbsent(ks, x -> new TreeMap<>(own.comparator()));
        if (op == CREATE) {
          continue;
        }
      }
      byte[] k = new byte[p.getInt()];
      p.get(k);
      if (op == PUT || op == PUT_IN) {
        byte[] v = new byte[p.getInt()];
        p.get(v);
        m.put(k, v);
      } else {
        m.remove(k);
      }
    }
  }

  private void append(WriteBatch ops) {
    try {
      ByteBuffer rec = record(ops);
      if (defect == Defect.ACK_BEFORE_DURABLE) {
        pending.write(rec.array());
        return;
      }
      if (defect == Defect.HALF_DURABLE_BATCH && ops.size() > 1) {
        // The bug: the batch's puts go to the log now, its deletes only at close.
        WriteBatch puts = new WriteBatch();
        WriteBatch deletes = new WriteBatch();
        for (int i = 0; i < ops.size(); i++) {
          copyOp(ops, i, ops.isDelete(i) ? deletes : puts);
        }
        rec = record(puts);
        if (deletes.size() > 0) {
          pending.write(record(deletes).array());
        }
      }
      if (defect == Defect.BATCH_AS_RECORDS && ops.size() > 1) {
        // The bug: one record per operation, each appended (and with SYNC synced) on its own.
        for (int i = 0; i < ops.size(); i++) {
          WriteBatch one = new WriteBatch();
          copyOp(ops, i, one);
          appendRecord(record(one));
        }
        return;
      }
      if (defect == Defect.KEYSPACE_PARTS_LOGGED_APART) {
        // The bug: one record per keyspace the batch names, each appended on its own.
        Map<String, WriteBatch> parts = new java.util.LinkedHashMap<>();
        for (int i = 0; i < ops.size(); i++) {
          String ks = ops.keyspace(i);
          copyOp(ops, i, parts.computeIfAbsent(ks == null ? "" : ks, x -> new WriteBatch()));
        }
        if (parts.size() > 1) {
          for (WriteBatch part : parts.values()) {
            appendRecord(record(part));
          }
          return;
        }
      }
      appendRecord(rec);
    } catch (IOException e) {
      throw new StoreIOException("engine 'ref': cannot append to " + logFile, e);
    }
  }

  private synchronized long recordsSince(long before) {
    return records - before;
  }

  /** Appends one whole record (and syncs it with SYNC); the caller holds the store's lock. */
  private void appendRecord(ByteBuffer rec) {
    try {
      records++;
      writeFully(log, rec);
      if (info.durability() == Durability.SYNC && defect != Defect.NEVER_SYNCS) {
        log.force(false);
        syncedLength = log.size();
      }
    } catch (IOException e) {
      throw new StoreIOException("engine 'ref': cannot append to " + logFile, e);
    }
  }

  /** Copies operation {@code i} of {@code from}, keyspace included, to the end of {@code to}. */
  private static void copyOp(WriteBatch from, int i, WriteBatch to) {
    String ks = from.keyspace(i);
    if (from.isDelete(i)) {
      if (ks == null) {
        to.delete(from.key(i));
      } else {
        to.delete(ks, from.key(i));
      }
    } else if (ks == null) {
      to.put(from.key(i), from.value(i));
    } else {
      to.put(ks, from.key(i), from.value(i));
    }
  }

  /**
   * One log record holding a resolved batch (an operation's keyspace is null for the store's own
   * keys, else a named keyspace): length, CRC32C, payload.
   */
  private ByteBuffer record(WriteBatch ops) throws IOException {
    ByteArrayOutputStream bos = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(bos);
    int count = 0;
    for (int i = 0; i < ops.size(); i++) {
      if (!(defect == Defect.LOST_DELETES && ops.isDelete(i))) {
        count++;
      }
    }
    out.writeInt(count);
    for (int i = 0; i < ops.size(); i++) {
      if (ops.isDelete(i) && defect == Defect.LOST_DELETES) {
        continue;
      }
      String ks = ops.keyspace(i);
      if (ks == null) {
        out.writeByte(ops.isDelete(i) ? DELETE : PUT);
      } else {
        out.writeByte(ops.isDelete(i) ? DELETE_IN : PUT_IN);
        writeName(out, ks);
      }
      out.writeInt(ops.key(i).length);
      out.write(ops.key(i));
      if (!ops.isDelete(i)) {
        out.writeInt(ops.value(i).length);
        out.write(ops.value(i));
      }
    }
    return seal(bos.toByteArray());
  }

  /** One log record creating or dropping a keyspace. */
  private static ByteBuffer record(byte op, String keyspace) throws IOException {
    ByteArrayOutputStream bos = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(bos);
    out.writeInt(1);
    out.writeByte(op);
    writeName(out, keyspace);
    return seal(bos.toByteArray());
  }

  private static void writeName(DataOutputStream out, String keyspace) throws IOException {
    byte[] name = keyspace.getBytes(StandardCharsets.US_ASCII); // checked: at most 64 ASCII
    out.writeByte(name.length);
    out.write(name);
  }

  private static ByteBuffer seal(byte[] payload) {
    ByteBuffer rec = ByteBuffer.allocate(8 + payload.length);
    rec.putInt(payload.length).putInt(0).put(payload);
    CRC32C c = new CRC32C();
    c.update(rec.array(), 0, 4);
    c.update(payload);
    rec.putInt(4, (int) c.getValue()).flip();
    return rec;
  }

  /** What an engine without a feature does when asked for it: refuse, naming the feature. */
  private void requireFeature(Feature f) {
    if (!info.has(f)) {
      throw new UnsupportedOperationException(
          "engine '" + info.engine() + "' does not support " + f);
    }
  }

  private void checkOpen() {
    if (closed) {
      throw new StoreClosedException("engine 'ref' at " + info.location() + " is closed");
    }
  }

  private void checkKey(byte[] key) {
    Objects.requireNonNull(key, "key");
    if (key.length == 0) {
      throw new IllegalArgumentException("empty key");
    }
    if (key.length > info.limits().maxKeySize()) {
      throw new IllegalArgumentException(
          "key is " + key.length + " bytes, limit " + info.limits().maxKeySize());
    }
  }

  private void checkValue(byte[] v) {
    Objects.requireNonNull(v, "value");
    if (v.length > info.limits().maxValueSize()) {
      throw new IllegalArgumentException(
          "value is " + v.length + " bytes, limit " + info.limits().maxValueSize());
    }
  }

  private void checkWritable() {
    checkOpen();
    if (info.readOnly()) {
      throw new UnsupportedOperationException("read-only");
    }
  }

  @Override
  public byte[] get(byte[] key) {
    return get(null, key);
  }

  /** A get in a keyspace (null: the store's own keys); a handle checked itself first. */
  byte[] get(String space, byte[] key) {
    checkKey(key);
    checkOpen();
    landReplayedPut();
    if (defect == Defect.STALE_READ_CACHE && space == null) {
      java.util.Optional<byte[]> cached = readCache.get(ByteBuffer.wrap(key));
      if (cached != null) { // the bug: nothing orders this read after a write in flight
        return cached.map(byte[]::clone).orElse(null);
      }
    }
    byte[] v;
    synchronized (this) {
      v = space(space).get(key);
    }
    if (defect == Defect.STALE_READ_CACHE && space == null) {
      readCache.put(
          ByteBuffer.wrap(key.clone()),
          java.util.Optional.ofNullable(v == null ? null : v.clone()));
    }
    if (v == null || (v.length == 0 && defect == Defect.EMPTY_VALUE_AS_NULL)) {
      return null;
    }
    return defect == Defect.ALIASED_VALUES ? v : v.clone();
  }

  @Override
  public void put(byte[] key, byte[] value) {
    put(null, key, value);
  }

  /** A put in a keyspace (null: the store's own keys). */
  void put(String space, byte[] key, byte[] value) {
    checkKey(key);
    checkValue(value);
    landReplayedPut();
    if (space != null) {
      writeOps(resolve(space, new WriteBatch().put(key, value)));
      return;
    }
    if (defect == Defect.HALTS_ON_HUGE_VALUE && value.length > (8 << 20)) {
      // What an engine whose native allocator aborts does to the JVM: no exception, no hook.
      Runtime.getRuntime().halt(Defect.HALT_STATUS);
    }
    if (defect == Defect.TORN_OVERWRITE && get(key) != null) {
      // The old value leaves the log at once; the new one reaches it only on close (with the
      // ACK_BEFORE_DURABLE records), as if an in-place overwrite were never whole until then.
      synchronized (this) {
        writeOps(new WriteBatch().delete(key));
        WriteBatch put = new WriteBatch().put(key, value);
        try {
          pending.write(record(put).array());
        } catch (IOException e) {
          throw new StoreIOException("engine 'ref': cannot stage an overwrite", e);
        }
        applyTo(map, put, false);
      }
      return;
    }
    writeOps(new WriteBatch().put(key, value));
    if (defect == Defect.REPLAYED_PUT) {
      replayed.set(new WriteBatch().put(key, value)); // copied by the batch
    }
  }

  /**
   * REPLAYED_PUT: lands the calling thread's last put again, over whatever other threads wrote to
   * its key since; called at the start of the thread's next call.
   */
  private void landReplayedPut() {
    if (defect != Defect.REPLAYED_PUT) {
      return;
    }
    WriteBatch late = replayed.get();
    if (late != null) {
      replayed.remove();
      if (!closed && !info.readOnly()) {
        writeOps(late);
      }
    }
  }

  @Override
  public void delete(byte[] key) {
    delete((String) null, key);
  }

  /** A delete in a keyspace (null: the store's own keys). */
  void delete(String space, byte[] key) {
    checkKey(key);
    landReplayedPut();
    writeOps(resolve(space, new WriteBatch().delete(key)));
  }

  @Override
  public void write(WriteBatch batch) {
    write(null, batch);
  }

  /** A batch written to a keyspace (null: to the store): its unnamed operations apply there. */
  void write(String space, WriteBatch batch) {
    Objects.requireNonNull(batch, "batch");
    requireFeature(Feature.ATOMIC_BATCH);
    if (batch.hasConditions()) {
      throw new IllegalArgumentException(
          "engine 'ref': the batch has "
              + batch.conditionCount()
              + " conditions; write it with writeIf");
    }
    String own = space == null ? Store.DEFAULT_KEYSPACE : space;
    boolean spans = false;
    for (int i = 0; i < batch.size(); i++) {
      String k = batch.keyspace(i);
      if (k != null && !own.equals(k)) {
        requireFeature(Feature.KEYSPACE_BATCH); // never apply it to the own keys instead
        spans = true;
      }
    }
    if (spans && defect == Defect.KEYSPACE_BY_KEYSPACE_BATCH) {
      // The bug: one batch per keyspace, each checked and applied before the next is looked at.
      WriteBatch resolved = resolve(space, batch);
      java.util.Map<String, WriteBatch> parts = new java.util.LinkedHashMap<>();
      for (int i = 0; i < resolved.size(); i++) {
        copyOp(resolved, i, parts.computeIfAbsent(resolved.keyspace(i), x -> new WriteBatch()));
      }
      for (WriteBatch part : parts.values()) {
        writeOps(part);
      }
      return;
    }
    WriteBatch resolved = space == null && !batch.namesKeyspaces() ? batch : resolve(space, batch);
    landReplayedPut();
    writeOps(resolved, defect == Defect.RETAINS_BATCH_ARRAYS);
  }

  @Override
  public boolean writeIf(WriteBatch batch) {
    return writeIf(null, batch);
  }

  /** A conditional batch written to a keyspace (null: to the store). */
  boolean writeIf(String space, WriteBatch batch) {
    Objects.requireNonNull(batch, "batch");
    requireFeature(Feature.CONDITIONAL_BATCH);
    String own = space == null ? Store.DEFAULT_KEYSPACE : space;
    for (int i = 0; i < batch.size(); i++) {
      if (batch.keyspace(i) != null && !own.equals(batch.keyspace(i))) {
        requireFeature(Feature.KEYSPACE_BATCH);
      }
    }
    for (int i = 0; i < batch.conditionCount(); i++) {
      checkKey(batch.conditionKey(i));
      String k = batch.conditionKeyspace(i);
      if (k != null && !own.equals(k)) {
        requireFeature(Feature.KEYSPACE_BATCH);
      }
    }
    checkWritable();
    landReplayedPut();
    WriteBatch ops = resolve(space, batch);
    if (defect == Defect.IGNORED_CONDITIONS) {
      writeOps(ops);
      return true;
    }
    if (defect == Defect.RACY_CONDITIONAL_BATCH) {
      synchronized (this) {
        if (!conditionsHold(space, batch, null)) {
          return false;
        }
      }
      LockSupport.parkNanos(20_000); // the window between the check and the write
      writeOps(ops);
      return true;
    }
    synchronized (this) {
      WriteBatch seen = defect == Defect.CONDITIONS_SEE_OWN_WRITES ? ops : null;
      if (!conditionsHold(space, batch, seen)) {
        return false;
      }
      writeOps(ops);
      return true;
    }
  }

  /**
   * Whether every condition holds; under the store's lock. {@code after} (a defect) makes the
   * conditions read the store as if that batch had been applied.
   */
  private boolean conditionsHold(String space, WriteBatch batch, WriteBatch after) {
    for (int i = 0; i < batch.conditionCount(); i++) {
      String k = batch.conditionKeyspace(i);
      String target = k == null ? space : Store.DEFAULT_KEYSPACE.equals(k) ? null : k;
      if (defect == Defect.CONDITIONS_IGNORE_KEYSPACE) {
        target = null;
      }
      byte[] key = batch.conditionKey(i);
      byte[] current = space(target).get(key);
      if (after != null) {
        for (int j = 0; j < after.size(); j++) {
          if (Objects.equals(after.keyspace(j), target) && Arrays.equals(after.key(j), key)) {
            current = after.value(j);
          }
        }
      }
      byte[] expected = batch.conditionValue(i);
      if (defect == Defect.CONDITIONS_COMPARED_BY_IDENTITY && expected != null) {
        if (current != expected) { // the bug: == on arrays, never the batch's
          return false;
        }
      } else if (!matches(current, expected)) {
        return false;
      }
    }
    return true;
  }

  /**
   * The batch with every operation naming the keyspace it applies to: null for the store's own keys
   * (also for {@code default}), else the name; unnamed operations apply to {@code space}.
   */
  private WriteBatch resolve(String space, WriteBatch batch) {
    WriteBatch out = new WriteBatch();
    for (int i = 0; i < batch.size(); i++) {
      String k = batch.keyspace(i);
      String target = k == null ? space : Store.DEFAULT_KEYSPACE.equals(k) ? null : k;
      if (defect == Defect.SHARED_KEYSPACE_KEYS) {
        target = null; // the bug: every handle writes the store's own keys
      }
      byte[] key = batch.key(i);
      if (batch.isDelete(i)) {
        if (target == null) {
          out.delete(key);
        } else {
          out.delete(target, key);
        }
      } else if (target == null) {
        out.put(key, batch.value(i));
      } else {
        out.put(target, key, batch.value(i));
      }
    }
    return out;
  }

  /** A keyspace's keys (null: the store's own); empty if it is gone. Under the store's lock. */
  private TreeMap<byte[], byte[]> space(String name) {
    if (name == null || defect == Defect.SHARED_KEYSPACE_KEYS) {
      return map;
    }
    TreeMap<byte[], byte[]> m = named.get(name);
    return m != null ? m : new TreeMap<>(map.comparator());
  }

  /** A put, a delete or a batch: one log record, applied to the map under the store's lock. */
  private void writeOps(WriteBatch batch) {
    writeOps(batch, false);
  }

  private void writeOps(WriteBatch batch, boolean retainsArrays) {
    if (defect == Defect.DEADLOCKED_WRITES && writes.incrementAndGet() > 100) {
      synchronized (this) {
        // Holding the store's monitor, wait for a lock that is never released: lock() ignores
        // interrupts, and every later write, read of stats and close() blocks on the monitor.
        neverReleased().lock();
      }
    }
    if (defect == Defect.STALLED_WRITES && writes.incrementAndGet() > 100) {
      while (!Thread.currentThread().isInterrupted()) {
        LockSupport.parkNanos(1_000_000_000L);
      }
      throw new StoreIOException("engine 'ref': a stalled write was interrupted", (Throwable) null);
    }
    if (defect == Defect.WRITE_FAILS && writes.incrementAndGet() == 20) {
      throw new StoreIOException(
          "engine 'ref': cannot append to " + logFile + ": No space left on device (write #20)",
          new IOException("No space left on device"));
    }
    if (defect == Defect.NON_ATOMIC_BATCH) {
      checkWritable();
      synchronized (this) {
        for (int i = 0; i < batch.size(); i++) {
          checkKey(batch.key(i));
          WriteBatch one = new WriteBatch();
          copyOp(batch, i, one);
          append(one);
          applyTo(map, one, false);
        }
      }
      return;
    }
    for (int i = 0; i < batch.size(); i++) {
      checkKey(batch.key(i));
      if (!batch.isDelete(i)) {
        checkValue(batch.value(i));
      }
    }
    checkWritable();
    if (batch.isEmpty()) {
      return;
    }
    if (defect == Defect.STALE_READ_CACHE) {
      for (int i = 0; i < batch.size(); i++) {
        if (batch.keyspace(i) == null) {
          // The bug: dropped before the write takes the lock, so a get in between caches the old
          // value again, and nothing drops it after the write.
          readCache.remove(ByteBuffer.wrap(batch.key(i)));
        }
      }
      LockSupport.parkNanos(20_000); // the window: a cache dropped ahead of a write's slow path
    }
    if (defect == Defect.LOST_CONCURRENT_WRITES) {
      TreeMap<byte[], byte[]> copy = new TreeMap<>(map);
      LockSupport.parkNanos(20_000); // the window (a yield is none on idle cores)
      synchronized (this) {
        append(batch);
      }
      applyTo(copy, batch, false);
      map = copy;
      return;
    }
    if (defect == Defect.HALF_VISIBLE_BATCH && batch.size() > 1) {
      synchronized (this) {
        append(batch); // the log gets the batch whole ...
      }
      for (int i = 0; i < batch.size(); i++) { // ... the index one key at a time
        WriteBatch one = new WriteBatch();
        copyOp(batch, i, one);
        synchronized (this) {
          applyTo(map, one, false);
        }
        LockSupport.parkNanos(20_000); // the window (a yield is none on idle cores)
      }
      return;
    }
    if (defect == Defect.UNLOCKED_INDEX) {
      synchronized (this) {
        append(batch);
      }
      applyTo(map, batch, false); // the bug: racing writers rebalance the same TreeMap at once
      return;
    }
    if (defect == Defect.SPLIT_LOCKS) {
      synchronized (logLock) {
        append(batch);
      }
      LockSupport.parkNanos(50_000); // between the two locks another writer may pass
      synchronized (this) {
        applyTo(map, batch, false);
      }
      return;
    }
    int counted = 0;
    if (defect == Defect.TRANSIENT_KEY_COUNT) {
      // The bug: every put counted as a new key before the write, corrected after it.
      for (int i = 0; i < batch.size(); i++) {
        counted += batch.keyspace(i) == null && !batch.isDelete(i) ? 1 : 0;
      }
      transientCount.addAndGet(counted);
      LockSupport.parkNanos(20_000); // the window (a yield is none on idle cores)
    }
    int delta;
    synchronized (this) {
      // Checked again under the lock: a write that passed the check before a close() took the
      // lock must not append to the log close() closed.
      checkWritable();
      int before = map.size();
      append(batch);
      applyTo(map, batch, retainsArrays);
      delta = map.size() - before;
    }
    if (defect == Defect.TRANSIENT_KEY_COUNT) {
      transientCount.addAndGet(delta - counted);
    }
    if (defect == Defect.RACY_KEY_COUNT) {
      int c = racyCount;
      LockSupport.parkNanos(20_000); // the window (a yield is none on idle cores)
      racyCount = c + delta;
    }
  }

  /**
   * Applies a resolved batch in place: its unnamed operations to {@code own} (the store's own keys,
   * or a racing copy of them), the others to their keyspace, created if absent. The caller holds
   * the store's lock (but for the defects that do not).
   */
  private void applyTo(TreeMap<byte[], byte[]> own, WriteBatch batch, boolean retainsArrays) {
    for (int i = 0; i < batch.size(); i++) {
      String ks = batch.keyspace(i);
      TreeMap<byte[], byte[]> m = own;
      if (ks != null) {
        forgotten.remove(ks);
        m = named.computeIfAbsent(ks, x -> new TreeMap<>(own.comparator()));
      }
      if (batch.isDelete(i)) {
        m.remove(batch.key(i));
      } else {
        if (retainsArrays) {
          m.put(batch.key(i), batch.value(i));
        } else {
          m.put(batch.key(i).clone(), batch.value(i).clone());
        }
      }
    }
  }

  @Override
  public void forEach(KeyRange range, Consumer<? super Entry> action) {
    if (defect == Defect.FOREACH_LEAKS_CURSOR) {
      Cursor c = scan(range);
      c.forEachRemaining(action);
      c.close(); // the bug: not reached when the action throws
      return;
    }
    Store.super.forEach(range, action);
  }

  @Override
  public Cursor scan(KeyRange range) {
    return scan(null, null, range);
  }

  /** A scan of a keyspace (null: the store's own keys) for a handle (null: the store). */
  Cursor scan(String space, RefKeyspace owner, KeyRange range) {
    Objects.requireNonNull(range, "range");
    checkOpen();
    landReplayedPut();
    requireFeature(Feature.ORDERED_SCAN); // as AbstractStore does: no scan without the feature
    if (range.isReverse()) {
      requireFeature(Feature.REVERSE_SCAN);
    }
    if (defect == Defect.LAZY_SNAPSHOT) {
      RefCursor lazy = new RefCursor(null, range, space, owner);
      synchronized (cursors) {
        cursors.add(lazy);
      }
      return lazy;
    }
    NavigableMap<byte[], byte[]> entries;
    synchronized (this) {
      // The snapshot is taken here, when scan() returns, not at the first hasNext(): a copy of the
      // range (the map itself changes in place under the lock, so a put costs no copy).
      TreeMap<byte[], byte[]> m = space(space);
      entries = defect == Defect.FAKE_SNAPSHOT ? view(m, range) : new TreeMap<>(view(m, range));
    }
    RefCursor c = new RefCursor(entries, range, space, owner);
    synchronized (cursors) {
      cursors.add(c);
    }
    return c;
  }

  private NavigableMap<byte[], byte[]> view(TreeMap<byte[], byte[]> m, KeyRange r) {
    if (r.isEmpty()) {
      return new TreeMap<>(m.comparator());
    }
    byte[] lo = r.lower();
    byte[] hi = r.upper();
    boolean loInc = r.lowerInclusive() || defect == Defect.EXCLUSIVE_AS_INCLUSIVE;
    NavigableMap<byte[], byte[]> v = m;
    if (lo != null && hi != null) {
      if (m.comparator().compare(lo, hi) > 0) {
        return new TreeMap<>(m.comparator());
      }
      v = v.subMap(lo, loInc, hi, r.upperInclusive());
    } else if (lo != null) {
      v = v.tailMap(lo, loInc);
    } else if (hi != null) {
      v = v.headMap(hi, r.upperInclusive());
    }
    if (r.isReverse()) {
      v = v.descendingMap();
      if (defect == Defect.REVERSE_OFF_BY_ONE && !v.isEmpty()) {
        v = v.tailMap(v.firstKey(), false);
      }
    }
    return v;
  }

  private final class RefCursor implements Cursor {
    private final KeyRange range;
    private Iterator<Map.Entry<byte[], byte[]>> it; // null until first use for LAZY_SNAPSHOT
    private long remaining;
    private boolean cursorClosed;
    private boolean asked; // hasNext() called since the last next(), for HASNEXT_ADVANCES

    private final String space; // the keyspace it reads, null for the store's own keys
    private final RefKeyspace owner; // the handle it was opened through, null for the store

    RefCursor(NavigableMap<byte[], byte[]> view, KeyRange range, String space, RefKeyspace owner) {
      this.range = range;
      this.space = space;
      this.owner = owner;
      this.it = view == null ? null : view.entrySet().iterator();
      this.remaining = defect == Defect.LIMIT_IGNORED ? Long.MAX_VALUE : range.limitValue();
    }

    private Iterator<Map.Entry<byte[], byte[]>> it() {
      if (it == null) {
        synchronized (RefStore.this) {
          it = new TreeMap<>(view(space(space), range)).entrySet().iterator();
        }
      }
      return it;
    }

    private void check() {
      if (cursorClosed) {
        throw new IllegalStateException("cursor closed");
      }
      if (closed && defect != Defect.CURSOR_OUTLIVES_STORE) {
        throw new StoreClosedException("store closed");
      }
      if (owner != null && owner.isClosed()) {
        throw new StoreClosedException("engine 'ref': " + owner.info().location() + " is closed");
      }
    }

    @Override
    public boolean hasNext() {
      check();
      if (defect == Defect.HASNEXT_ADVANCES && asked && remaining > 0 && it().hasNext()) {
        it().next(); // the bug: a repeated hasNext() moves on
      }
      asked = true;
      return remaining > 0 && it().hasNext();
    }

    @Override
    public Entry next() {
      check();
      if (!(remaining > 0 && it().hasNext())) {
        throw new NoSuchElementException();
      }
      asked = false;
      remaining--;
      Map.Entry<byte[], byte[]> e = it().next();
      return new Entry(e.getKey().clone(), e.getValue().clone());
    }

    @Override
    public void close() {
      cursorClosed = true;
      synchronized (cursors) {
        cursors.remove(this);
      }
    }
  }

  @Override
  public boolean putIfAbsent(byte[] key, byte[] value) {
    return putIfAbsent(null, key, value);
  }

  boolean putIfAbsent(String space, byte[] key, byte[] value) {
    checkKey(key);
    checkValue(value);
    requireFeature(Feature.CONDITIONAL_WRITE);
    return compareAndSet(space, key, null, value);
  }

  @Override
  public boolean replace(byte[] key, byte[] expected, byte[] value) {
    return replace(null, key, expected, value);
  }

  boolean replace(String space, byte[] key, byte[] expected, byte[] value) {
    checkKey(key);
    Objects.requireNonNull(expected, "expected");
    checkValue(value);
    requireFeature(Feature.CONDITIONAL_WRITE);
    return compareAndSet(space, key, expected, value);
  }

  @Override
  public boolean delete(byte[] key, byte[] expected) {
    return delete(null, key, expected);
  }

  boolean delete(String space, byte[] key, byte[] expected) {
    checkKey(key);
    Objects.requireNonNull(expected, "expected");
    requireFeature(Feature.CONDITIONAL_WRITE);
    return compareAndSet(space, key, expected, null);
  }

  /** Compares and writes under the store's lock: the log record and the map change together. */
  private boolean compareAndSet(String space, byte[] key, byte[] expected, byte[] value) {
    checkWritable();
    landReplayedPut();
    WriteBatch op =
        resolve(
            space, value == null ? new WriteBatch().delete(key) : new WriteBatch().put(key, value));
    if (defect == Defect.PUT_IF_ABSENT_OVERWRITES && expected == null) {
      writeOps(op);
      return true;
    }
    if (defect == Defect.REPLACE_COMPARED_BY_IDENTITY && expected != null) {
      synchronized (this) {
        if (space(space).get(key) != expected) { // the bug: == on arrays, never the caller's
          return false;
        }
        writeOps(op);
        return true;
      }
    }
    if (defect == Defect.SPLIT_COMPARE_AND_SET) {
      // The bug: compare-and-set over get and put, as a default written against the API would be.
      if (!matches(get(space, key), expected)) {
        return false;
      }
      writeOps(op);
      return true;
    }
    if (defect == Defect.RACY_CONDITIONAL_WRITE) {
      byte[] current;
      synchronized (this) {
        current = space(space).get(key);
      }
      if (!matches(current, expected)) {
        return false;
      }
      LockSupport.parkNanos(20_000); // the window between the compare and the write
      writeOps(op);
      return true;
    }
    synchronized (this) {
      if (!matches(space(space).get(key), expected)) {
        return false;
      }
      writeOps(op);
      return true;
    }
  }

  private static boolean matches(byte[] current, byte[] expected) {
    return expected == null ? current == null : Arrays.equals(current, expected);
  }

  @Override
  public List<byte[]> getAll(List<byte[]> keys) {
    return getAll(null, keys);
  }

  List<byte[]> getAll(String space, List<byte[]> keys) {
    Objects.requireNonNull(keys, "keys");
    for (byte[] k : keys) {
      checkKey(k);
    }
    if (space != null) {
      List<byte[]> out = new ArrayList<>(keys.size());
      for (byte[] k : keys) {
        out.add(get(space, k));
      }
      return out;
    }
    if (defect == Defect.GETALL_IN_KEY_ORDER) {
      List<byte[]> sorted = new ArrayList<>(keys);
      sorted.sort(map.comparator());
      return Store.super.getAll(sorted);
    }
    switch (defect) {
      case GETALL_AFTER_CLOSE -> {
        // The bug: answered from the map, which outlives close(), with no check that it is open.
        List<byte[]> out = new ArrayList<>(keys.size());
        synchronized (this) {
          for (byte[] k : keys) {
            byte[] v = map.get(k);
            out.add(v == null ? null : v.clone());
          }
        }
        return out;
      }
      case GETALL_CACHES_ABSENT -> {
        List<byte[]> out = new ArrayList<>(keys.size());
        for (byte[] k : keys) {
          ByteBuffer id = ByteBuffer.wrap(k.clone());
          byte[] v = knownAbsent.contains(id) ? null : get(k); // the bug: no write forgets it
          if (v == null) {
            knownAbsent.add(id);
          }
          out.add(v);
        }
        return out;
      }
      case GETALL_SHARES_DUPLICATES -> {
        Map<ByteBuffer, byte[]> read = new java.util.HashMap<>();
        List<byte[]> out = new ArrayList<>(keys.size());
        for (byte[] k : keys) {
          // The bug: one array per distinct key, handed to every position asking for it.
          out.add(read.computeIfAbsent(ByteBuffer.wrap(k.clone()), x -> get(k)));
        }
        return out;
      }
      case GETALL_LAZY_VIEW -> {
        checkOpen();
        // The bug: a view over the caller's list, each value read when its position is read.
        return new java.util.AbstractList<>() {
          @Override
          public byte[] get(int i) {
            return RefStore.this.get(keys.get(i));
          }

          @Override
          public int size() {
            return keys.size();
          }
        };
      }
      default -> {
        return Store.super.getAll(keys);
      }
    }
  }

  @Override
  public Snapshot snapshot() {
    return snapshot(null, null);
  }

  /** A snapshot of a keyspace (null: the store's own keys) for a handle (null: the store). */
  Snapshot snapshot(String space, RefKeyspace owner) {
    checkOpen();
    requireFeature(Feature.SNAPSHOT_READ);
    landReplayedPut();
    TreeMap<byte[], byte[]> frozen = null; // LIVE_SNAPSHOT: null, read the store itself
    if (defect == Defect.UNLOCKED_SNAPSHOT) {
      frozen = new TreeMap<>(space(space)); // the bug: copied while a writer may be applying
    } else if (defect != Defect.LIVE_SNAPSHOT) {
      synchronized (this) {
        checkOpen();
        frozen = new TreeMap<>(space(space)); // O(n): the reference engine favours plainness
      }
    }
    RefSnapshot snap = new RefSnapshot(frozen, space, owner);
    synchronized (cursors) {
      snapshots.add(snap);
    }
    return snap;
  }

  /** A copy of the map taken under the store's lock (or, broken, the live store). */
  private final class RefSnapshot implements Snapshot {
    private final TreeMap<byte[], byte[]> frozen;
    private final List<RefCursor> own = new ArrayList<>();
    private volatile boolean snapClosed;
    private final String space;
    private final RefKeyspace owner;

    RefSnapshot(TreeMap<byte[], byte[]> frozen, String space, RefKeyspace owner) {
      this.frozen = frozen;
      this.space = space;
      this.owner = owner;
    }

    private void check() {
      if (closed || (owner != null && owner.isClosed())) {
        throw new StoreClosedException("engine 'ref': the snapshot's store is closed");
      }
      if (snapClosed) {
        throw new IllegalStateException("engine 'ref': snapshot is closed");
      }
    }

    @Override
    public byte[] get(byte[] key) {
      checkKey(key);
      check();
      if (frozen == null) {
        return RefStore.this.get(space, key);
      }
      byte[] v = frozen.get(key);
      return v == null ? null : v.clone();
    }

    @Override
    public List<byte[]> getAll(List<byte[]> keys) {
      Objects.requireNonNull(keys, "keys");
      List<byte[]> out = new ArrayList<>(keys.size());
      for (byte[] k : keys) {
        out.add(get(k));
      }
      return out;
    }

    @Override
    public Cursor scan(KeyRange range) {
      Objects.requireNonNull(range, "range");
      check();
      requireFeature(Feature.ORDERED_SCAN);
      if (range.isReverse()) {
        requireFeature(Feature.REVERSE_SCAN);
      }
      if (frozen == null) {
        return RefStore.this.scan(space, owner, range);
      }
      RefCursor c = new RefCursor(view(frozen, range), range, space, owner);
      synchronized (cursors) {
        cursors.add(c);
        own.add(c);
      }
      return c;
    }

    @Override
    public void close() {
      snapClosed = true;
      List<RefCursor> mine;
      synchronized (cursors) {
        snapshots.remove(this);
        mine = new ArrayList<>(own);
        own.clear();
      }
      for (RefCursor c : mine) {
        c.close();
      }
    }
  }

  @Override
  public void backup(Path target) {
    Objects.requireNonNull(target, "target");
    requireFeature(Feature.BACKUP);
    checkOpen();
    Path dest = target.toAbsolutePath().normalize();
    Path own = logFile.getParent().toAbsolutePath().normalize();
    if (dest.startsWith(own) || own.startsWith(dest)) {
      throw new IllegalArgumentException("engine 'ref': backup target " + dest + " is the store");
    }
    try {
      if (Files.exists(dest)) {
        try (java.util.stream.Stream<Path> in = Files.list(dest)) {
          if (in.findAny().isPresent()) {
            throw new IllegalArgumentException(
                "engine 'ref': backup target " + dest + " is not an empty directory");
          }
        }
      }
      Files.createDirectories(dest);
      if (defect == Defect.BACKUP_KEYSPACES_ONE_BY_ONE) {
        backupKeyspacesOneByOne(own, dest);
        return;
      }
      synchronized (this) {
        checkOpen();
        Path identity = own.resolve(StoreDirectory.IDENTITY_FILE);
        if (Files.exists(identity)) {
          Files.copy(identity, dest.resolve(StoreDirectory.IDENTITY_FILE));
        }
        if (defect == Defect.BACKUP_WITHOUT_KEYSPACES) {
          // The bug: a backup of the store's own keys only, as if there were nothing else.
          writeLog(dest.resolve(LOG), map, new TreeMap<>());
          StoreDirectory.syncDirectory(dest);
          return;
        }
        long length = defect == Defect.BACKUP_FROM_LAST_SYNC ? syncedLength : log.size();
        try (FileChannel out =
            FileChannel.open(
                dest.resolve(LOG), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
          ByteBuffer all = ByteBuffer.allocate((int) length);
          while (all.hasRemaining() && log.read(all, all.position()) >= 0) {
            // read until the copy's length
          }
          all.flip();
          writeFully(out, all);
          if (defect != Defect.BACKUP_FROM_LAST_SYNC) {
            writeFully(out, ByteBuffer.wrap(pending.toByteArray())); // acknowledged, not yet out
          }
          writeFully(out, header(DIRTY), 0); // recovered like a crash: every whole record counts
          out.force(true);
        }
        StoreDirectory.syncDirectory(dest);
      }
    } catch (IOException e) {
      throw new StoreIOException("engine 'ref': cannot back up to " + dest, e);
    }
  }

  /**
   * The bug of {@link Defect#BACKUP_KEYSPACES_ONE_BY_ONE}: the store's own keys, then each
   * keyspace, each copied under the lock on its own, with writers let in between.
   */
  private void backupKeyspacesOneByOne(Path own, Path dest) throws IOException {
    TreeMap<byte[], byte[]> keys;
    List<String> names;
    synchronized (this) {
      checkOpen();
      Path identity = own.resolve(StoreDirectory.IDENTITY_FILE);
      if (Files.exists(identity)) {
        Files.copy(identity, dest.resolve(StoreDirectory.IDENTITY_FILE));
      }
      keys = new TreeMap<>(map);
      names = new ArrayList<>(liveSpaces().keySet());
    }
    TreeMap<String, TreeMap<byte[], byte[]>> spaces = new TreeMap<>();
    for (String name : names) {
      LockSupport.parkNanos(20_000_000); // as a copy of the previous keyspace's files would take
      synchronized (this) {
        TreeMap<byte[], byte[]> m = named.get(name);
        if (m != null) {
          spaces.put(name, new TreeMap<>(m));
        }
      }
    }
    writeLog(dest.resolve(LOG), keys, spaces);
    StoreDirectory.syncDirectory(dest);
  }

  /** Records appended to the log since the store opened; guarded by the store's lock. */
  private long records;

  @Override
  public void compact() {
    checkWritable();
    if (defect == Defect.COMPACT_OUTSIDE_LOCK) {
      TreeMap<byte[], byte[]> snapshot;
      TreeMap<String, TreeMap<byte[], byte[]>> spaces = new TreeMap<>();
      long copiedAt;
      synchronized (this) {
        snapshot = new TreeMap<>(map);
        named.forEach((n, m) -> spaces.put(n, new TreeMap<>(m)));
        copiedAt = records;
      }
      // The window a real engine leaves by chance, made certain: writers get in between the copy
      // and the rewrite (a few dozen records; at most 10 s, should none come).
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (recordsSince(copiedAt) < 32 && System.nanoTime() < deadline) {
        LockSupport.parkNanos(100_000);
      }
      rewrite(snapshot, spaces); // the bug: writes from here to the rename are in the old log only
      return;
    }
    synchronized (this) {
      rewrite(map, defect == Defect.COMPACT_FORGETS_KEYSPACES ? new TreeMap<>() : liveSpaces());
    }
  }

  /** The named keyspaces that are listed (DROP_KEEPS_KEYS keeps some that are not). */
  private TreeMap<String, TreeMap<byte[], byte[]>> liveSpaces() {
    TreeMap<String, TreeMap<byte[], byte[]>> live = new TreeMap<>(named);
    live.keySet().removeAll(forgotten);
    return live;
  }

  /**
   * Writes {@code entries} and the keyspaces {@code spaces} to a new log and renames it over the
   * log (under the store's lock).
   */
  private void rewrite(
      TreeMap<byte[], byte[]> entries, TreeMap<String, TreeMap<byte[], byte[]>> spaces) {
    Path next = logFile.resolveSibling(COMPACTING);
    try {
      writeLog(next, entries, spaces);
      synchronized (this) {
        Files.move(
            next, logFile, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        StoreDirectory.syncDirectory(logFile.getParent());
        pending.reset(); // the new log holds every entry, also those whose records were pending
        log.close();
        log = FileChannel.open(logFile, StandardOpenOption.READ, StandardOpenOption.WRITE);
        log.position(log.size());
        syncedLength = log.size();
      }
    } catch (IOException e) {
      throw new StoreIOException("engine 'ref': cannot compact " + logFile, e);
    }
  }

  /**
   * Writes a new log file holding {@code entries} (the store's own keys) and {@code spaces} (each
   * keyspace's creation, then its keys), synced, recovered like a crash when opened.
   */
  private void writeLog(
      Path file, TreeMap<byte[], byte[]> entries, TreeMap<String, TreeMap<byte[], byte[]>> spaces)
      throws IOException {
    try (FileChannel out =
        FileChannel.open(
            file,
            StandardOpenOption.CREATE,
            StandardOpenOption.TRUNCATE_EXISTING,
            StandardOpenOption.WRITE)) {
      writeFully(out, header(DIRTY));
      for (Map.Entry<byte[], byte[]> e : entries.entrySet()) {
        if (defect == Defect.COMPACT_DROPS_EMPTY_VALUES && e.getValue().length == 0) {
          continue;
        }
        writeFully(out, record(new WriteBatch().put(e.getKey(), e.getValue())));
      }
      for (Map.Entry<String, TreeMap<byte[], byte[]>> s : spaces.entrySet()) {
        writeFully(out, record(CREATE, s.getKey()));
        for (Map.Entry<byte[], byte[]> e : s.getValue().entrySet()) {
          writeFully(out, record(new WriteBatch().put(s.getKey(), e.getKey(), e.getValue())));
        }
      }
      out.force(true);
    }
  }

  private static void writeFully(FileChannel ch, ByteBuffer b) throws IOException {
    while (b.hasRemaining()) {
      ch.write(b);
    }
  }

  private static void writeFully(FileChannel ch, ByteBuffer b, long at) throws IOException {
    while (b.hasRemaining()) {
      at += ch.write(b, at);
    }
  }

  /**
   * Starts the background flusher: with BUFFERED, a log that grew is forced within {@link
   * #FLUSH_INTERVAL_NANOS}, under the store's lock (compaction swaps the log under it).
   */
  private void startFlusher() {
    Thread t = new Thread(this::flushLoop, "ref-flusher " + logFile);
    t.setDaemon(true);
    flusher = t;
    t.start();
  }

  private void flushLoop() {
    long flushed = -1;
    while (!closed) {
      LockSupport.parkNanos(this, FLUSH_INTERVAL_NANOS);
      try {
        synchronized (this) {
          if (closed) {
            return;
          }
          if (failBackground) {
            throw new IOException("injected: the background flush of " + logFile + " failed");
          }
          long size = log.size();
          if (size != flushed) {
            log.force(false);
            flushed = size;
          }
        }
        backgroundFailure = null; // a flush worked: the store is healthy again
      } catch (IOException | RuntimeException | Error e) {
        if (defect == Defect.SILENT_BACKGROUND_FAILURE) {
          return; // the bug: the thread ends, nobody is told, the health stays OK
        }
        // Retried at the next interval; meanwhile the store is DEGRADED and verify() says so.
        backgroundFailure = e instanceof IOException io ? io : new IOException(e);
      }
    }
  }

  /** For {@link RefProvider#failBackgroundWork}: whether there is a flusher, now failing. */
  boolean failBackgroundWork() {
    if (flusher == null) {
      return false;
    }
    failBackground = true;
    return true;
  }

  /** What the health reports while background flushes fail, else null. */
  private String backgroundProblem() {
    IOException f = backgroundFailure;
    return f == null ? null : "background flush fails and is retried: " + f.getMessage();
  }

  /**
   * Re-reads the log and checks its header and every record's checksum; then throws {@link
   * StoreIOException} while background flushes fail (the data is intact, the store not healthy).
   */
  @Override
  public void verify() {
    verifyLog();
    IOException f = backgroundFailure;
    if (f != null) {
      throw new StoreIOException(
          "engine 'ref': "
              + backgroundProblem()
              + " (the data checked is intact; the store is not healthy)",
          f);
    }
  }

  private void verifyLog() {
    if (defect == Defect.VERIFY_SEES_WRITES_AS_DAMAGE) {
      checkOpen();
      long before;
      try {
        before = log.size();
      } catch (IOException e) {
        throw new StoreIOException("engine 'ref': cannot size " + logFile + ": " + e, e);
      }
      checkLog(); // the bug: without the store's lock, so writes go on meanwhile
      long after;
      try {
        after = log.size();
      } catch (IOException e) {
        throw new StoreIOException("engine 'ref': cannot size " + logFile + ": " + e, e);
      }
      if (after != before) {
        throw new StoreCorruptedException(
            "engine 'ref': "
                + logFile
                + " is "
                + after
                + " bytes but its records end at "
                + before
                + ": a damaged tail",
            logFile,
            before);
      }
      return;
    }
    synchronized (this) {
      if (defect != Defect.VERIFY_AFTER_CLOSE_IS_IO_ERROR) {
        checkOpen();
      }
      if (defect == Defect.VERIFY_DOES_NOTHING) {
        return; // the bug: nothing read, nothing checked
      }
      checkLog();
    }
  }

  /** What {@link #verify()} checks: the header and every record of the log. */
  private void checkLog() {
    try {
      ByteBuffer all = readAll(log);
      long size = all.remaining();
      boolean headerOk = size >= HEADER;
      if (headerOk) {
        byte[] magic = new byte[MAGIC.length];
        all.get(magic);
        CRC32C hc = new CRC32C();
        hc.update(all.array(), 0, 16);
        headerOk =
            (Arrays.equals(magic, MAGIC) || Arrays.equals(magic, MAGIC_BEFORE_KEYSPACES))
                && all.getInt(16) == (int) hc.getValue();
      }
      if (!headerOk) {
        throw new StoreCorruptedException(
            "engine 'ref': the header of " + logFile + " is damaged", logFile, 0);
      }
      // A log opened read-only after a crash (no clean length) was not recovered: its records end
      // at the last whole one, and what follows is an unfinished write, as the open took it.
      boolean crashed = info.readOnly() && all.getLong(8) == DIRTY;
      if (crashed && defect == Defect.CRASH_IMAGE_AS_DAMAGE) {
        // The bug: a log nobody closed cleanly is reported damaged, though recovery opens it.
        throw new StoreCorruptedException(
            "engine 'ref': " + logFile + " was not closed cleanly: its tail may be damaged",
            logFile,
            size);
      }
      long valid = replay(all, new TreeMap<>(map.comparator()), new TreeMap<>(), true);
      if (valid != size && !crashed) {
        throw new StoreCorruptedException(
            "engine 'ref': the record at offset "
                + valid
                + " of "
                + logFile
                + " fails its checksum or has an impossible length",
            logFile,
            valid);
      }
    } catch (IOException e) {
      throw new StoreIOException("engine 'ref': cannot read " + logFile + ": " + e, e);
    }
  }

  @Override
  public synchronized void sync() {
    checkOpen();
    try {
      log.force(false);
      syncedLength = log.size();
    } catch (IOException e) {
      throw new StoreIOException("engine 'ref': cannot sync " + logFile, e);
    }
  }

  @Override
  public StoreInfo info() {
    return info;
  }

  @Override
  public StoreStats stats() {
    return stats(null, null);
  }

  /** The stats of a keyspace (null: the store's own keys) for a handle (null: the store). */
  synchronized StoreStats stats(String space, RefKeyspace owner) {
    checkOpen();
    try {
      int open = 0;
      synchronized (cursors) {
        for (RefCursor c : cursors) {
          open += owner == null || c.owner == owner ? 1 : 0;
        }
      }
      long count =
          space != null
              ? space(space).size()
              : defect == Defect.RACY_KEY_COUNT
                  ? racyCount
                  : defect == Defect.TRANSIENT_KEY_COUNT ? transientCount.get() : map.size();
      String problem = backgroundProblem();
      return new StoreStats(
          count,
          true,
          log.size(),
          Map.of("open-cursors", open),
          problem == null ? StoreStats.Health.OK : StoreStats.Health.DEGRADED,
          problem);
    } catch (IOException e) {
      throw new StoreIOException("engine 'ref': cannot size " + logFile, e);
    }
  }

  boolean isClosed() {
    return closed;
  }

  @Override
  public Store keyspace(String name) {
    checkNamed(name);
    requireFeature(Feature.KEYSPACES);
    name = folded(name);
    synchronized (this) {
      checkOpen();
      if (!named.containsKey(name) || forgotten.contains(name)) {
        if (info.readOnly()) {
          throw new UnsupportedOperationException(
              info.describe()
                  + " is open read-only and has no keyspace '"
                  + name
                  + "' (it has "
                  + keyspaces()
                  + ")");
        }
        if (defect != Defect.EMPTY_KEYSPACE_NOT_LOGGED) { // the bug: only its keys' records
          appendRecord(keyspaceRecord(CREATE, name));
        }
        forgotten.remove(name); // DROP_KEEPS_KEYS: the old keys are back
        named.computeIfAbsent(name, x -> new TreeMap<>(map.comparator()));
      }
      java.util.EnumSet<Feature> features = java.util.EnumSet.noneOf(Feature.class);
      features.addAll(info.features());
      features.remove(Feature.KEYSPACES); // keyspaces do not nest
      features.remove(Feature.BACKUP); // the store is backed up whole
      RefKeyspace h =
          new RefKeyspace(
              this,
              name,
              new StoreInfo(
                  info.engine(),
                  features,
                  info.limits(),
                  info.durability(),
                  info.location() + "#" + name,
                  info.readOnly()));
      handles.add(h);
      return h;
    }
  }

  @Override
  public synchronized List<String> keyspaces() {
    requireFeature(Feature.KEYSPACES);
    checkOpen();
    return List.copyOf(liveSpaces().keySet()); // sorted: a TreeMap's keys
  }

  @Override
  public boolean dropKeyspace(String name) {
    checkNamed(name);
    requireFeature(Feature.KEYSPACES);
    name = folded(name);
    synchronized (this) {
      checkWritable();
      for (RefKeyspace h : new ArrayList<>(handles)) {
        if (h.name().equals(name)) {
          h.close();
        }
      }
      if (!named.containsKey(name) || forgotten.contains(name)) {
        return false;
      }
      if (defect == Defect.DROP_KEEPS_KEYS) {
        forgotten.add(name); // the bug: the name goes, the keys stay (and no record says so)
        return true;
      }
      appendRecord(keyspaceRecord(DROP, name));
      named.remove(name);
      return true;
    }
  }

  /** A keyspace's name as this engine keeps it: as given, or (a defect) in lower case. */
  private String folded(String name) {
    return defect == Defect.KEYSPACE_NAMES_IGNORE_CASE
        ? name.toLowerCase(java.util.Locale.ROOT)
        : name;
  }

  private static void checkNamed(String name) {
    Store.checkKeyspaceName(name);
    if (Store.DEFAULT_KEYSPACE.equals(name)) {
      throw new IllegalArgumentException(
          "'" + Store.DEFAULT_KEYSPACE + "' names the store's own keys, not a keyspace");
    }
  }

  private ByteBuffer keyspaceRecord(byte op, String name) {
    try {
      return record(op, name);
    } catch (IOException e) {
      throw new StoreIOException("engine 'ref': cannot encode a record for " + name, e);
    }
  }

  /** Closes a handle: its cursors and snapshots go with it. */
  synchronized void closeHandle(RefKeyspace h) {
    handles.remove(h);
    synchronized (cursors) {
      cursors.removeIf(c -> c.owner == h);
      snapshots.removeIf(s -> s.owner == h);
    }
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    boolean freesFirst = defect == Defect.CLOSE_FREES_BEFORE_MARKING;
    if (freesFirst) {
      // The bug: the index is freed first, the store marked closed only at the end, so a call
      // arriving meanwhile passes checkOpen() and reads freed state.
      map = null;
      named.clear();
    } else {
      closed = true;
    }
    if (flusher != null) {
      LockSupport.unpark(flusher); // it sees closed and ends
    }
    handles.clear(); // they see the store closed
    synchronized (cursors) {
      snapshots.clear(); // their reads now throw StoreClosedException (closed is set)
    }
    try {
      if (!info.readOnly()) {
        if (pending.size() > 0) {
          log.write(ByteBuffer.wrap(pending.toByteArray()));
        }
        // The records first, then the header that says they are whole: a clean close.
        log.force(false);
        writeFully(log, header(log.size()), 0);
        log.force(false);
      }
      log.close();
    } catch (IOException e) {
      throw new StoreIOException("engine 'ref': cannot close " + logFile, e);
    } finally {
      if (directory != null) {
        directory.close();
      }
      if (lock != null) {
        lock.close();
      }
      if (defect == Defect.JVM_LOCAL_LOCK && !info.readOnly()) {
        LOCAL_LOCKS.remove(Path.of(info.location()).toAbsolutePath().normalize());
      }
      closed = true; // CLOSE_FREES_BEFORE_MARKING: only now (else already set)
    }
  }
}
