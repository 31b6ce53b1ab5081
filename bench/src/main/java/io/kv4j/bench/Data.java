package io.kv4j.bench;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * The keys and values every scenario uses. A key is its index as 8 big-endian bytes followed by
 * padding, so unsigned key order is index order. A value is self-describing: 8 bytes of key index,
 * 4 bytes of slot, then {@code valueSize - 12} bytes copied from a fixed pool at that slot. Reads
 * verify the whole value against the pool, so they need not know which version a concurrent writer
 * stored last; a value read under the wrong key, truncated or corrupted fails.
 *
 * <p>The pool is random bytes (incompressible) by default; compressible values are half random and
 * half a repeated byte, like db_bench's compression ratio 0.5.
 */
public final class Data {
  /** Bytes of header before the pool payload. */
  static final int HEADER = 12;

  /** The smallest value size supported: the header plus 4 payload bytes. */
  public static final int MIN_VALUE_SIZE = 16;

  /**
   * Distinct payloads: a value's payload is the pool from its slot on. The pool (256 KiB plus one
   * value) is kept small so it stays in the CPU's L2 cache: every read compares a whole value with
   * it, and a pool of several MiB evicted the engines' own hot data (a 4 MiB pool cost hashlog a
   * fifth of its reads per second and left Chronicle Map unchanged, same-run pairs). Windows of one
   * random pool still make each value incompressible on its own, and two values in one 4 KiB block
   * share bytes only when their slots lie within a value's length (under 1%).
   */
  private static final int POOL_SLOTS = 1 << 18;

  private static final byte PAD = (byte) 0x5f;

  private final int keySize;
  private final ValueSizes sizes;
  private final boolean compressible;
  private final byte[] pool;

  /**
   * Creates the data set description.
   *
   * @param keySize key length in bytes, at least 8
   * @param valueSize value length in bytes, at least {@link #MIN_VALUE_SIZE}
   * @param compressible whether value payloads compress about 2:1
   * @param seed seed of the pool
   */
  public Data(int keySize, int valueSize, boolean compressible, long seed) {
    this(keySize, constantSize(valueSize), compressible, seed);
  }

  private static ValueSizes constantSize(int valueSize) {
    if (valueSize < MIN_VALUE_SIZE) {
      throw new IllegalArgumentException(
          "value size must be at least " + MIN_VALUE_SIZE + " bytes, got " + valueSize);
    }
    return ValueSizes.constant(valueSize);
  }

  /**
   * Creates the data set description with values of varying sizes.
   *
   * @param keySize key length in bytes, at least 8
   * @param sizes the values' sizes
   * @param compressible whether value payloads compress about 2:1
   * @param seed seed of the pool
   */
  Data(int keySize, ValueSizes sizes, boolean compressible, long seed) {
    if (keySize < 8) {
      throw new IllegalArgumentException("key size must be at least 8 bytes, got " + keySize);
    }
    this.keySize = keySize;
    this.sizes = sizes;
    this.compressible = compressible;
    this.pool = new byte[POOL_SLOTS + sizes.max()];
    SplittableRandom r = new SplittableRandom(seed);
    if (compressible) {
      // Runs of 16 random bytes then 16 equal bytes: about 2:1 for any LZ-style compressor.
      for (int i = 0; i < pool.length; i++) {
        pool[i] = (i & 16) == 0 ? (byte) r.nextInt(256) : (byte) 'a';
      }
    } else {
      for (int i = 0; i < pool.length; i += 8) {
        long v = r.nextLong();
        for (int j = 0; j < 8 && i + j < pool.length; j++) {
          pool[i + j] = (byte) (v >>> (8 * j));
        }
      }
    }
  }

  /**
   * Key length.
   *
   * @return bytes
   */
  public int keySize() {
    return keySize;
  }

  /**
   * Value length: the largest when values vary ({@link #sizes()}).
   *
   * @return bytes
   */
  public int valueSize() {
    return sizes.max();
  }

  /**
   * The values' sizes: one, or a range drawn per write.
   *
   * @return the sizes
   */
  ValueSizes sizes() {
    return sizes;
  }

  /**
   * The mean value size: what live bytes assume per key.
   *
   * @return bytes
   */
  double meanValueSize() {
    return sizes.mean();
  }

  /**
   * Whether values compress.
   *
   * @return true for compressible payloads
   */
  public boolean compressible() {
    return compressible;
  }

  /**
   * A new key array for an index.
   *
   * @param index the key index, non-negative
   * @return the key
   */
  public byte[] key(long index) {
    byte[] k = new byte[keySize];
    key(index, k);
    return k;
  }

  /**
   * Writes the key of an index into a reusable array of {@link #keySize()} bytes.
   *
   * @param index the key index
   * @param into the array to fill
   */
  public void key(long index, byte[] into) {
    putLong(into, 0, index);
    Arrays.fill(into, 8, keySize, PAD);
  }

  /**
   * The index a key encodes.
   *
   * @param key a key made by this class
   * @return the index
   */
  public static long indexOf(byte[] key) {
    return getLong(key, 0);
  }

  /**
   * Fills a reusable value array for a key index with the payload at a slot.
   *
   * @param index the key index
   * @param slot any int; reduced to the pool size
   * @param into an array of {@link #valueSize()} bytes, or of any size in the range of {@link
   *     #sizes()}
   */
  public void value(long index, int slot, byte[] into) {
    int s = Math.floorMod(slot, POOL_SLOTS);
    putLong(into, 0, index);
    into[8] = (byte) (s >>> 24);
    into[9] = (byte) (s >>> 16);
    into[10] = (byte) (s >>> 8);
    into[11] = (byte) s;
    System.arraycopy(pool, s, into, HEADER, into.length - HEADER);
  }

  /**
   * A new value array for a key index.
   *
   * @param index the key index
   * @param slot the pool slot
   * @return the value
   */
  public byte[] value(long index, int slot) {
    byte[] v = new byte[sizes.max()];
    value(index, slot, v);
    return v;
  }

  /**
   * Checks that {@code value} is a value written for key {@code index}.
   *
   * @param index the key index the value was read under
   * @param value the value read, or null
   * @throws VerificationException if it is null, has a size values never have, or does not match
   *     the pool
   */
  public void verify(long index, byte[] value) {
    if (value == null) {
      throw new VerificationException("key " + index + ": value missing (null)");
    }
    if (value.length < sizes.min() || value.length > sizes.max()) {
      throw new VerificationException(
          "key "
              + index
              + ": value is "
              + value.length
              + " bytes, expected "
              + (sizes.fixed() ? "" + sizes.max() : sizes.min() + ".." + sizes.max()));
    }
    long stored = getLong(value, 0);
    if (stored != index) {
      throw new VerificationException("key " + index + ": value belongs to key " + stored);
    }
    int s =
        ((value[8] & 0xff) << 24)
            | ((value[9] & 0xff) << 16)
            | ((value[10] & 0xff) << 8)
            | (value[11] & 0xff);
    if (s < 0 || s >= POOL_SLOTS) {
      throw new VerificationException(
          "key " + index + ": value header is corrupt (slot " + s + ")");
    }
    if (!Arrays.equals(value, HEADER, value.length, pool, s, s + value.length - HEADER)) {
      throw new VerificationException("key " + index + ": value payload is corrupt");
    }
  }

  static void putLong(byte[] b, int off, long v) {
    for (int i = 7; i >= 0; i--) {
      b[off + i] = (byte) v;
      v >>>= 8;
    }
  }

  static long getLong(byte[] b, int off) {
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = (v << 8) | (b[off + i] & 0xff);
    }
    return v;
  }

  /** A read returned a wrong value: the benchmark result is invalid. */
  public static final class VerificationException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what was wrong
     */
    public VerificationException(String message) {
      super(message);
    }
  }
}
