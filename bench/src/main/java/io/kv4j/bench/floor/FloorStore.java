package io.kv4j.bench.floor;

import io.kv4j.Cursor;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.Set;
import java.util.zip.CRC32C;

/**
 * The floor store. File {@code floor.dat}, mapped read-write over {@code capacity} bytes (sparse),
 * records appended back to back:
 *
 * <pre>
 * offset  width  field
 * 0       4      key length k (big-endian)
 * 4       4      value length v (big-endian)
 * 8       k      key
 * 8+k     v      value
 * </pre>
 *
 * <p>Checked ({@code floor-crc}): a 4-byte CRC32C of the key and then the value follows the lengths
 * (at offset 8, key and value 4 bytes later), and every get checks it over the value it copied out,
 * so what it returns is what was checked: the least a verifying engine does.
 *
 * <p>Index: open addressing with linear probing over one {@code long[]} of [hash | 1, offset + 1]
 * pairs (0 = empty), doubling at load 1/2. A put writes the record, then the slot's offset, then
 * its hash (release stores), so a get that sees the hash sees a whole record; a grown table is
 * published whole through a volatile field. The file is not reopened: every open starts empty.
 */
final class FloorStore implements Store {
  private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
  private static final VarHandle LONG_BE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

  private final StoreConfig config;
  private final String id; // the engine id, for messages
  private final boolean checked; // a CRC32C per record, checked on every get
  private final int header; // bytes before the key: 8, or 12 when checked
  private final Path file;
  private final FileChannel channel;
  private final MappedByteBuffer map;
  private final int capacity;
  private volatile long[] table = new long[2 * 1024];
  private int size;
  private int end;
  private volatile boolean closed;

  FloorStore(StoreConfig config, long capacity, String id, boolean checked) {
    this.config = config;
    this.id = id;
    this.checked = checked;
    this.header = checked ? 12 : 8;
    this.capacity = (int) capacity;
    if (config.path() == null) {
      throw new IllegalArgumentException("engine '" + id + "' needs a path");
    }
    try {
      Files.createDirectories(config.path());
      this.file = config.path().resolve("floor.dat");
      this.channel =
          FileChannel.open(
              file,
              StandardOpenOption.CREATE,
              StandardOpenOption.READ,
              StandardOpenOption.WRITE,
              StandardOpenOption.TRUNCATE_EXISTING);
      this.map = channel.map(FileChannel.MapMode.READ_WRITE, 0, capacity);
    } catch (IOException e) {
      throw new StoreIOException(id + ": cannot open " + config.path() + ": " + e, e);
    }
  }

  /** A cheap 64-bit hash (8 bytes at a time, then a finaliser); never 0. */
  static long hash(byte[] key) {
    long h = 0x9E3779B97F4A7C15L ^ key.length;
    int i = 0;
    for (; i + 8 <= key.length; i += 8) {
      h = (h ^ (long) LONG_BE.get(key, i)) * 0xC2B2AE3D27D4EB4FL;
    }
    for (; i < key.length; i++) {
      h = (h ^ (key[i] & 0xFF)) * 0x100000001B3L;
    }
    h ^= h >>> 33;
    h *= 0xFF51AFD7ED558CCDL;
    h ^= h >>> 33;
    return h | 1;
  }

  private boolean keyAt(int off, byte[] key) {
    if (map.getInt(off) != key.length) {
      return false;
    }
    int p = off + header;
    int i = 0;
    for (; i + 8 <= key.length; i += 8) {
      if (map.getLong(p + i) != (long) LONG_BE.get(key, i)) {
        return false;
      }
    }
    for (; i < key.length; i++) {
      if (map.get(p + i) != key[i]) {
        return false;
      }
    }
    return true;
  }

  private static int home(long h, int mask) {
    return (int) (h ^ (h >>> 32)) & mask;
  }

  /** The first empty slot of {@code h}'s probe run in {@code t}, which has one. */
  private static int freeSlot(long[] t, long h) {
    int mask = (t.length >> 1) - 1;
    int i = home(h, mask);
    while (t[2 * i] != 0) {
      i = (i + 1) & mask;
    }
    return i;
  }

  /** The record offset + 1 of a key, or 0. */
  private long find(long[] t, long h, byte[] key) {
    int mask = (t.length >> 1) - 1;
    int i = home(h, mask);
    for (int probes = 0; probes <= mask; probes++) {
      long w = (long) LONGS.getAcquire(t, 2 * i);
      if (w == 0) {
        return 0;
      }
      if (w == h) {
        long off = t[2 * i + 1];
        if (off != 0 && keyAt((int) (off - 1), key)) {
          return off;
        }
      }
      i = (i + 1) & mask;
    }
    return 0;
  }

  private void checkOpen() {
    if (closed) {
      throw new StoreClosedException(id + " store at " + config.path() + " is closed");
    }
  }

  @Override
  public byte[] get(byte[] key) {
    checkOpen();
    long off = find(table, hash(key), key);
    if (off == 0) {
      return null;
    }
    int o = (int) off - 1;
    int v = map.getInt(o + 4);
    byte[] out = new byte[v];
    map.get(o + header + key.length, out, 0, v);
    if (checked && crc(key, out) != map.getInt(o + 8)) {
      throw new StoreCorruptedException(
          id + ": checksum mismatch in " + file + " at offset " + o, file, o);
    }
    return out;
  }

  /** CRC32C of key, then value: two calls over the arrays, as a verifying engine's get makes. */
  private static int crc(byte[] key, byte[] value) {
    CRC32C c = new CRC32C();
    c.update(key, 0, key.length);
    c.update(value, 0, value.length);
    return (int) c.getValue();
  }

  @Override
  public synchronized void put(byte[] key, byte[] value) {
    checkOpen();
    long need = (long) header + key.length + value.length;
    if (end + need > capacity) {
      throw new StoreIOException(
          id
              + ": "
              + file
              + " is full ("
              + capacity
              + " bytes; puts only append): it is a read ceiling, raise 'capacity' or measure"
              + " read scenarios only",
          new IOException("capacity reached"));
    }
    int off = end;
    map.putInt(off, key.length);
    map.putInt(off + 4, value.length);
    if (checked) {
      map.putInt(off + 8, crc(key, value));
    }
    map.put(off + header, key);
    map.put(off + header + key.length, value);
    end = off + (int) need;
    long h = hash(key);
    long[] t = table;
    int mask = (t.length >> 1) - 1;
    int i = home(h, mask);
    while (true) {
      long w = t[2 * i];
      if (w == 0) {
        break;
      }
      if (w == h && keyAt((int) (t[2 * i + 1] - 1), key)) {
        LONGS.setRelease(t, 2 * i + 1, off + 1L);
        return;
      }
      i = (i + 1) & mask;
    }
    if ((size + 1) * 2L > t.length >> 1) {
      t = grow(t);
      i = freeSlot(t, h);
      t[2 * i + 1] = off + 1L;
      t[2 * i] = h;
      table = t;
    } else {
      LONGS.setRelease(t, 2 * i + 1, off + 1L);
      LONGS.setRelease(t, 2 * i, h);
    }
    size++;
  }

  private static long[] grow(long[] old) {
    long[] t = new long[old.length * 2];
    for (int s = 0; s < old.length; s += 2) {
      long h = old[s];
      if (h != 0) {
        int i = freeSlot(t, h);
        t[2 * i] = h;
        t[2 * i + 1] = old[s + 1];
      }
    }
    return t;
  }

  @Override
  public void delete(byte[] key) {
    throw new UnsupportedOperationException(id + ": a read ceiling, it has no deletes");
  }

  @Override
  public Cursor scan(KeyRange range) {
    throw new UnsupportedOperationException(id + ": a read ceiling, it has no ordered scans");
  }

  @Override
  public void write(WriteBatch batch) {
    throw new UnsupportedOperationException(id + ": a read ceiling, it has no atomic batches");
  }

  @Override
  public void sync() {
    checkOpen(); // nothing is ever forced: not persistent
  }

  @Override
  public StoreInfo info() {
    return new StoreInfo(
        id, Set.of(), FloorProvider.LIMITS, config.durability(), config.path().toString(), false);
  }

  @Override
  public synchronized StoreStats stats() {
    return new StoreStats(size, true, end, Map.of("index-bytes", (long) table.length * 8));
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      channel.close(); // the mapping goes with the GC: a get racing close reads valid memory
    } catch (IOException e) {
      throw new StoreIOException(id + ": cannot close " + file + ": " + e, e);
    }
  }
}
