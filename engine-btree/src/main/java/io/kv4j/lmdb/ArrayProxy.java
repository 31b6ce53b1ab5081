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
 * <p>Every store operation calls {@link #release()} in a {@code finally} block after its last
 * native call. Operations never nest on one thread, so freeing all of the thread's pending buffers
 * then is safe. Between operations a thread holds no native memory, so a dying thread leaks none.
 */
final class ArrayProxy extends BufferProxy<byte[]> {
  static final ArrayProxy INSTANCE = new ArrayProxy();

  private static final MemoryIO MEM = MemoryIO.getInstance();
  private static final byte[] EMPTY = new byte[0];
  private static final ThreadLocal<Pending> PENDING = ThreadLocal.withInitial(Pending::new);

  /** Native buffers handed to LMDB by the current thread and not yet freed. */
  private static final class Pending {
    long[] addresses = new long[4];
    int count;
  }

  private ArrayProxy() {}

  /** Frees the native copies made by the current thread's last operation. Never throws. */
  static void release() {
    Pending p = PENDING.get();
    for (int i = 0; i < p.count; i++) {
      MEM.freeMemory(p.addresses[i]);
      p.addresses[i] = 0;
    }
    p.count = 0;
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
    Pending p = PENDING.get();
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
    if (size < 0 || size > Integer.MAX_VALUE - 8) {
      throw new IllegalStateException("LMDB returned a record of " + size + " bytes");
    }
    if (size == 0) {
      return new byte[0];
    }
    byte[] copy = new byte[(int) size];
    MEM.getByteArray(address, copy, 0, copy.length);
    return copy;
  }
}
