package io.kv4j.lmdb;

import java.util.zip.CRC32C;

/**
 * kv4j's framing of LMDB values, which lets every read verify what it got: LMDB keeps no checksum
 * of its own, so a flipped bit in a page would otherwise come back as another value.
 *
 * <p>A store of format 2 (option {@code checksums=true}, the default for new stores) stores each
 * value as:
 *
 * <table>
 *   <caption>a framed value (the data of one LMDB node)</caption>
 *   <tr><th>offset</th><th>width</th><th>field</th></tr>
 *   <tr><td>0</td><td>4</td><td>CRC32C, little-endian, over: the key's length as 2 bytes
 *       big-endian, the key's bytes, then the value's bytes</td></tr>
 *   <tr><td>4</td><td>n</td><td>the value's bytes, as given to {@code put}</td></tr>
 * </table>
 *
 * <p>The key is covered, so a damaged key (which a scan returns) fails its check, and a node whose
 * key and data boundary moved (a damaged key size) does too; its length is covered so that moving
 * bytes between key and value never keeps the sum. Keys themselves are stored raw, because LMDB
 * orders and finds them by their bytes. Format 1 stores (adopted stores made before identities, and
 * stores created with {@code checksums=false}) store values raw, with nothing to verify.
 */
final class ValueFrame {
  /** Bytes the frame adds before the value. */
  static final int HEADER = 4;

  private ValueFrame() {}

  /**
   * Frames a value for storing.
   *
   * @param key the key it is stored under
   * @param value the value
   * @return a fresh array: checksum, then value
   */
  static byte[] encode(byte[] key, byte[] value) {
    byte[] out = new byte[HEADER + value.length];
    System.arraycopy(value, 0, out, HEADER, value.length);
    int crc = checksum(key, value);
    out[0] = (byte) crc;
    out[1] = (byte) (crc >>> 8);
    out[2] = (byte) (crc >>> 16);
    out[3] = (byte) (crc >>> 24);
    return out;
  }

  /**
   * The checksum of a key and value as the frame records it.
   *
   * @param key the key
   * @param value the value (without the frame)
   * @return the CRC32C
   */
  static int checksum(byte[] key, byte[] value) {
    CRC32C crc = new CRC32C();
    crc.update(key.length >>> 8);
    crc.update(key.length);
    crc.update(key, 0, key.length);
    crc.update(value, 0, value.length);
    return (int) crc.getValue();
  }

  /**
   * Reads the recorded checksum of a frame given as its 4 first bytes in an int read in native
   * order.
   *
   * @param nativeInt the first 4 bytes, read as one native-order int
   * @return the recorded checksum
   */
  static int recorded(int nativeInt) {
    return java.nio.ByteOrder.nativeOrder() == java.nio.ByteOrder.LITTLE_ENDIAN
        ? nativeInt
        : Integer.reverseBytes(nativeInt);
  }
}
