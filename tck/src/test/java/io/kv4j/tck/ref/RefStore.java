package io.kv4j.tck.ref;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.kv4j.spi.DirectoryLock;
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
import java.util.TreeMap;
import java.util.zip.CRC32;

/**
 * A TreeMap plus a redo log ({@code ref.log}: an 8-byte magic, then records of [int length, int
 * CRC32, payload = int count, count x (byte op, int keyLength, key, [int valueLength, value])]).
 * One record per put, delete or batch, so a batch is atomic across crashes. Recovery replays valid
 * records and truncates a torn tail. {@link #compact()} writes the live entries to a new log and
 * renames it over the old one. Simple on purpose; correctness is what it is for.
 */
final class RefStore implements Store {
  private static final byte[] MAGIC = "KV4JREF1".getBytes(StandardCharsets.US_ASCII);

  private final Defect defect;
  private final StoreInfo info;
  private final DirectoryLock lock;
  private FileChannel log; // replaced by compact(); used under the store's monitor
  private final Path logFile;
  private final List<RefCursor> cursors = new ArrayList<>();
  private final ByteArrayOutputStream pending = new ByteArrayOutputStream();
  private volatile TreeMap<byte[], byte[]> map;
  private volatile boolean closed;

  private RefStore(
      StoreInfo info, Defect defect, DirectoryLock lock, FileChannel log, Path logFile) {
    this.info = info;
    this.defect = defect;
    this.lock = lock;
    this.log = log;
    this.logFile = logFile;
    Comparator<byte[]> order =
        defect == Defect.SIGNED_ORDER ? Arrays::compare : Arrays::compareUnsigned;
    this.map = new TreeMap<>(order);
  }

  static RefStore open(StoreConfig config, Defect defect) {
    Path dir = config.path();
    try {
      if (!Files.isDirectory(dir)) {
        if (!config.createIfMissing()) {
          throw new StoreIOException(
              "engine 'ref': directory " + dir + " does not exist", new IOException("missing"));
        }
        Files.createDirectories(dir);
      }
    } catch (IOException e) {
      throw new StoreIOException("engine 'ref': cannot create " + dir, e);
    }
    DirectoryLock lock = defect == Defect.NO_LOCK ? null : DirectoryLock.acquire(dir, "ref");
    Path file = dir.resolve("ref.log");
    try {
      FileChannel ch =
          FileChannel.open(
              file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
      StoreInfo info =
          new StoreInfo(
              "ref",
              RefProvider.FEATURES,
              RefProvider.LIMITS,
              config.durability(),
              dir.toString(),
              config.readOnly());
      RefStore s = new RefStore(info, defect, lock, ch, file);
      s.recover();
      return s;
    } catch (IOException e) {
      if (lock != null) {
        lock.close();
      }
      throw new StoreIOException("engine 'ref': cannot open " + file, e);
    } catch (RuntimeException e) {
      if (lock != null) {
        lock.close();
      }
      throw e;
    }
  }

  private void recover() throws IOException {
    long size = log.size();
    if (size == 0) {
      log.write(ByteBuffer.wrap(MAGIC), 0);
      log.force(true);
      log.position(MAGIC.length);
      return;
    }
    ByteBuffer all = ByteBuffer.allocate((int) size);
    while (all.hasRemaining() && log.read(all, all.position()) > 0) {}
    all.flip();
    byte[] magic = new byte[MAGIC.length];
    if (size < MAGIC.length || !Arrays.equals(get(all, magic), MAGIC)) {
      log.close();
      throw new StoreCorruptedException(
          "engine 'ref': " + logFile + " is not a ref log (bad magic)", logFile, 0);
    }
    long valid = MAGIC.length;
    while (all.remaining() >= 8) {
      int len = all.getInt();
      int crc = all.getInt();
      if (len < 4 || len > all.remaining()) {
        break;
      }
      byte[] payload = new byte[len];
      all.get(payload);
      CRC32 c = new CRC32();
      c.update(payload);
      if ((int) c.getValue() != crc) {
        break;
      }
      apply(ByteBuffer.wrap(payload), map);
      valid = all.position();
    }
    log.truncate(valid);
    log.position(valid);
  }

  private static byte[] get(ByteBuffer b, byte[] into) {
    b.get(into);
    return into;
  }

  private static void apply(ByteBuffer p, TreeMap<byte[], byte[]> m) {
    int n = p.getInt();
    for (int i = 0; i < n; i++) {
      byte op = p.get();
      byte[] k = new byte[p.getInt()];
      p.get(k);
      if (op == 0) {
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
      writeFully(log, rec);
      if (info.durability() == Durability.SYNC) {
        log.force(false);
      }
    } catch (IOException e) {
      throw new StoreIOException("engine 'ref': cannot append to " + logFile, e);
    }
  }

  /** One log record holding a batch: length, CRC32, payload. */
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
      if (ops.isDelete(i)) {
        if (defect == Defect.LOST_DELETES) {
          continue;
        }
        out.writeByte(1);
        out.writeInt(ops.key(i).length);
        out.write(ops.key(i));
      } else {
        out.writeByte(0);
        out.writeInt(ops.key(i).length);
        out.write(ops.key(i));
        out.writeInt(ops.value(i).length);
        out.write(ops.value(i));
      }
    }
    byte[] payload = bos.toByteArray();
    CRC32 c = new CRC32();
    c.update(payload);
    ByteBuffer rec = ByteBuffer.allocate(8 + payload.length);
    rec.putInt(payload.length).putInt((int) c.getValue()).put(payload).flip();
    return rec;
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
    checkKey(key);
    checkOpen();
    byte[] v = map.get(key);
    if (v == null || (v.length == 0 && defect == Defect.EMPTY_VALUE_AS_NULL)) {
      return null;
    }
    return defect == Defect.ALIASED_VALUES ? v : v.clone();
  }

  @Override
  public void put(byte[] key, byte[] value) {
    checkKey(key);
    checkValue(value);
    if (defect == Defect.TORN_OVERWRITE && map.containsKey(key)) {
      // The old value leaves the log at once; the new one reaches it only on close (with the
      // ACK_BEFORE_DURABLE records), as if an in-place overwrite were never whole until then.
      synchronized (this) {
        write(new WriteBatch().delete(key));
        WriteBatch put = new WriteBatch().put(key, value);
        try {
          pending.write(record(put).array());
        } catch (IOException e) {
          throw new StoreIOException("engine 'ref': cannot stage an overwrite", e);
        }
        applyToMap(put);
      }
      return;
    }
    write(new WriteBatch().put(key, value));
  }

  @Override
  public void delete(byte[] key) {
    checkKey(key);
    write(new WriteBatch().delete(key));
  }

  @Override
  public void write(WriteBatch batch) {
    Objects.requireNonNull(batch, "batch");
    if (defect == Defect.NON_ATOMIC_BATCH) {
      checkWritable();
      synchronized (this) {
        for (int i = 0; i < batch.size(); i++) {
          checkKey(batch.key(i));
          WriteBatch one = new WriteBatch();
          if (batch.isDelete(i)) {
            one.delete(batch.key(i));
          } else {
            one.put(batch.key(i), batch.value(i));
          }
          append(one);
          applyToMap(one);
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
    if (defect == Defect.LOST_CONCURRENT_WRITES) {
      TreeMap<byte[], byte[]> copy = new TreeMap<>(map);
      Thread.yield();
      synchronized (this) {
        append(batch);
      }
      apply(copy, batch);
      map = copy;
      return;
    }
    synchronized (this) {
      append(batch);
      applyToMap(batch);
    }
  }

  private void applyToMap(WriteBatch batch) {
    // Copy-on-write so open cursors keep their snapshot.
    TreeMap<byte[], byte[]> copy = defect == Defect.FAKE_SNAPSHOT ? map : new TreeMap<>(map);
    apply(copy, batch);
    map = copy;
  }

  private static void apply(TreeMap<byte[], byte[]> m, WriteBatch batch) {
    for (int i = 0; i < batch.size(); i++) {
      if (batch.isDelete(i)) {
        m.remove(batch.key(i));
      } else {
        m.put(batch.key(i).clone(), batch.value(i).clone());
      }
    }
  }

  @Override
  public Cursor scan(KeyRange range) {
    Objects.requireNonNull(range, "range");
    checkOpen();
    RefCursor c = new RefCursor(view(map, range), range);
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
    private final Iterator<Map.Entry<byte[], byte[]>> it;
    private long remaining;
    private boolean cursorClosed;

    RefCursor(NavigableMap<byte[], byte[]> view, KeyRange range) {
      this.it = view.entrySet().iterator();
      this.remaining = defect == Defect.LIMIT_IGNORED ? Long.MAX_VALUE : range.limitValue();
    }

    private void check() {
      if (cursorClosed) {
        throw new IllegalStateException("cursor closed");
      }
      if (closed && defect != Defect.CURSOR_OUTLIVES_STORE) {
        throw new StoreClosedException("store closed");
      }
    }

    @Override
    public boolean hasNext() {
      check();
      return remaining > 0 && it.hasNext();
    }

    @Override
    public Entry next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      remaining--;
      Map.Entry<byte[], byte[]> e = it.next();
      return new Entry(e.getKey().clone(), e.getValue().clone());
    }

    @Override
    public void close() {
      cursorClosed = true;
    }
  }

  @Override
  public synchronized void compact() {
    checkWritable();
    Path next = logFile.resolveSibling("ref.log.compact");
    try {
      try (FileChannel out =
          FileChannel.open(
              next,
              StandardOpenOption.CREATE,
              StandardOpenOption.TRUNCATE_EXISTING,
              StandardOpenOption.WRITE)) {
        writeFully(out, ByteBuffer.wrap(MAGIC));
        for (Map.Entry<byte[], byte[]> e : map.entrySet()) {
          if (defect == Defect.COMPACT_DROPS_EMPTY_VALUES && e.getValue().length == 0) {
            continue;
          }
          writeFully(out, record(new WriteBatch().put(e.getKey(), e.getValue())));
        }
        out.force(true);
      }
      Files.move(
          next, logFile, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      try (FileChannel d = FileChannel.open(logFile.getParent(), StandardOpenOption.READ)) {
        d.force(true);
      }
      pending.reset(); // the new log holds every entry, also those whose records were pending
      log.close();
      log = FileChannel.open(logFile, StandardOpenOption.READ, StandardOpenOption.WRITE);
      log.position(log.size());
    } catch (IOException e) {
      throw new StoreIOException("engine 'ref': cannot compact " + logFile, e);
    }
  }

  private static void writeFully(FileChannel ch, ByteBuffer b) throws IOException {
    while (b.hasRemaining()) {
      ch.write(b);
    }
  }

  @Override
  public synchronized void sync() {
    checkOpen();
    try {
      log.force(false);
    } catch (IOException e) {
      throw new StoreIOException("engine 'ref': cannot sync " + logFile, e);
    }
  }

  @Override
  public StoreInfo info() {
    return info;
  }

  @Override
  public synchronized StoreStats stats() {
    checkOpen();
    try {
      return new StoreStats(map.size(), true, log.size(), Map.of());
    } catch (IOException e) {
      throw new StoreIOException("engine 'ref': cannot size " + logFile, e);
    }
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      if (pending.size() > 0) {
        log.write(ByteBuffer.wrap(pending.toByteArray()));
      }
      log.close();
    } catch (IOException e) {
      throw new StoreIOException("engine 'ref': cannot close " + logFile, e);
    } finally {
      if (lock != null) {
        lock.close();
      }
    }
  }
}
