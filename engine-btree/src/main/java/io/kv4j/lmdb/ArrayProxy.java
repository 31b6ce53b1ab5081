package io.kv4j.lmdb;

import com.kenai.jffi.MemoryIO;
import java.util.Arrays;
import java.util.Comparator;
import jnr.ffi.Pointer;
import org.lmdbjava.BufferProxy;

/**
 * An lmdbjava buffer proxy for {@code byte[]} that needs no {@code --add-opens} flags and never
 * leaves native memory to the garbage collector.
 *
 * <p>lmdbjava's {@code ByteBuffer} proxies reflect on {@code java.nio.Buffer.address} and fail
 * without {@code --add-opens java.base/java.nio=ALL-UNNAMED}. Its {@code ByteArrayProxy} needs no
 * flag but copies every key and value above 256 bytes into native memory that only a finalizer
 * frees, so writing large values from a reused array can exhaust native memory before the heap
 * feels any pressure. This proxy copies keys and values going in to {@code malloc}ed memory that
 * the calling thread frees explicitly with {@link #release()} when its native call is done, and
 * copies data coming out of LMDB into fresh arrays (so nothing returned points into the map).
 *
 * <p>Reads also check what LMDB hands back, since LMDB trusts its pages: a record must lie in the
 * file-backed part of the map ({@link MapBounds}) before it is copied, and in a store with
 * checksums a value's {@link ValueFrame} is verified on the one copy made (the thread's current
 * operation, set by {@link #beginGet} or {@link #beginCursor}, tells keys from values); a failure
 * throws {@link Damage} out of lmdbjava's call.
 *
 * <p>Every store operation calls {@link #release()} in a {@code finally} block after its last
 * native call. Operations never nest on one thread, so freeing all of the thread's pending buffers
 * then is safe. Between operations a thread holds no native memory, so a dying thread leaks none.
 */
final class ArrayProxy extends BufferProxy<byte[]> {
  static final ArrayProxy INSTANCE = new ArrayProxy();

  private static final MemoryIO MEM = MemoryIO.getInstance();
  private static final byte[] EMPTY = new byte[0];
  private static final ThreadLocal<Session> SESSION = ThreadLocal.withInitial(Session::new);

  private static final int RAW = 0;
  private static final int GET = 1;
  private static final int CURSOR = 2;

  /**
   * The calling thread's current operation: native buffers handed to LMDB and not yet freed, and
   * what the records LMDB hands back are (raw, the value of a get, or key/value pairs of a cursor
   * step, which lmdbjava copies out key first, then value).
   */
  private static final class Session {
    long[] addresses = new long[4];
    int count;
    int mode = RAW;
    MapBounds bounds;
    boolean framed;
    boolean expectKey;
    byte[] key;
  }

  /**
   * Thrown from inside an lmdbjava call when a record fails its check (outside the file, or a
   * framed value whose checksum does not match); the store turns it into a {@link
   * io.kv4j.StoreCorruptedException}.
   */
  static final class Damage extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The record's offset in the data file, or -1 when unknown. */
    final long offset;

    Damage(String message, long offset) {
      super(message, null, false, false);
      this.offset = offset;
    }
  }

  private ArrayProxy() {}

  /**
   * Starts a point read: the next record LMDB hands back is the value of {@code key}.
   *
   * @param bounds the file-backed part of the map, checked before every copy
   * @param framed whether values carry a {@link ValueFrame} to verify and strip
   * @param key the key being read
   */
  static void beginGet(MapBounds bounds, boolean framed, byte[] key) {
    Session s = SESSION.get();
    s.mode = GET;
    s.bounds = bounds;
    s.framed = framed;
    s.key = key;
  }

  /**
   * Starts a cursor step: LMDB hands back a key, then its value, possibly several times.
   *
   * @param bounds the file-backed part of the map, checked before every copy
   * @param framed whether values carry a {@link ValueFrame} to verify and strip
   */
  static void beginCursor(MapBounds bounds, boolean framed) {
    Session s = SESSION.get();
    s.mode = CURSOR;
    s.bounds = bounds;
    s.framed = framed;
    s.expectKey = true;
    s.key = null;
  }

  /**
   * Ends the current thread's operation: frees the native copies it made and forgets its read mode.
   * Never throws.
   */
  static void release() {
    Session p = SESSION.get();
    for (int i = 0; i < p.count; i++) {
      MEM.freeMemory(p.addresses[i]);
      p.addresses[i] = 0;
    }
    p.count = 0;
    p.mode = RAW;
    p.bounds = null;
    p.key = null;
  }

  @Override
  protected byte[] allocate() {
    return EMPTY;
  }

  @Override
  protected void deallocate(byte[] buffer) {
    // Nothing native belongs to the array.
  }

  @Override
  protected byte[] getBytes(byte[] buffer) {
    return buffer.clone();
  }

  @Override
  protected Comparator<byte[]> getSignedComparator() {
    return Arrays::compare;
  }

  @Override
  protected Comparator<byte[]> getUnsignedComparator() {
    return Arrays::compareUnsigned;
  }

  @Override
  protected void in(byte[] buffer, Pointer ptr, long ptrAddr) {
    Session p = SESSION.get();
    if (p.count == p.addresses.length) {
      p.addresses = Arrays.copyOf(p.addresses, p.count * 2);
    }
    long address = MEM.allocateMemory(Math.max(1, buffer.length), false);
    if (address == 0) {
      throw new OutOfMemoryError("cannot allocate " + buffer.length + " bytes of native memory");
    }
    p.addresses[p.count++] = address;
    MEM.putByteArray(address, buffer, 0, buffer.length);
    MEM.putLong(ptrAddr + STRUCT_FIELD_OFFSET_SIZE, buffer.length);
    MEM.putAddress(ptrAddr + STRUCT_FIELD_OFFSET_DATA, address);
  }

  @Override
  protected void in(byte[] buffer, int size, Pointer ptr, long ptrAddr) {
    // Only used by MDB_RESERVE, which this engine never asks for.
    throw new UnsupportedOperationException("MDB_RESERVE is not supported by " + getClass());
  }

  @Override
  protected byte[] out(byte[] buffer, Pointer ptr, long ptrAddr) {
    long size = MEM.getLong(ptrAddr + STRUCT_FIELD_OFFSET_SIZE);
    long address = MEM.getAddress(ptrAddr + STRUCT_FIELD_OFFSET_DATA);
    Session s = SESSION.get();
    MapBounds bounds = s.bounds;
    if (size < 0 || size > Integer.MAX_VALUE - 8) {
      throw new Damage(
          "LMDB returned a record of " + size + " bytes",
          bounds == null ? -1 : bounds.offsetOf(address));
    }
    if (bounds != null && size > 0 && !bounds.covers(address, size)) {
      throw new Damage(
          "LMDB returned a record of "
              + size
              + " bytes that lies outside the data file (a damaged page)",
          bounds.offsetOf(address));
    }
    switch (s.mode) {
      case GET:
        return s.framed ? unframe(s.key, address, (int) size, bounds) : copy(address, (int) size);
      case CURSOR:
        if (s.expectKey) {
          s.expectKey = false;
          s.key = copy(address, (int) size);
          return s.key;
        }
        s.expectKey = true;
        return s.framed ? unframe(s.key, address, (int) size, bounds) : copy(address, (int) size);
      default:
        return copy(address, (int) size);
    }
  }

  private static byte[] copy(long address, int size) {
    if (size == 0) {
      return new byte[0];
    }
    byte[] copy = new byte[size];
    MEM.getByteArray(address, copy, 0, size);
    return copy;
  }

  /**
   * Copies a framed value's bytes out of the map (one copy, the one the caller gets) and checks the
   * frame's checksum on that copy.
   */
  private static byte[] unframe(byte[] key, long address, int size, MapBounds bounds) {
    if (size < ValueFrame.HEADER || key == null) {
      throw new Damage(
          "a stored value of "
              + size
              + " bytes is shorter than its "
              + ValueFrame.HEADER
              + "-byte checksum frame",
          bounds == null ? -1 : bounds.offsetOf(address));
    }
    int recorded = ValueFrame.recorded(MEM.getInt(address));
    byte[] value = copy(address + ValueFrame.HEADER, size - ValueFrame.HEADER);
    int actual = ValueFrame.checksum(key, value);
    if (actual != recorded) {
      throw new Damage(
          String.format(
              "the value stored under a %d-byte key fails its CRC32C check (recorded %08x,"
                  + " computed %08x)",
              key.length, recorded, actual),
          bounds == null ? -1 : bounds.offsetOf(address));
    }
    return value;
  }
}
