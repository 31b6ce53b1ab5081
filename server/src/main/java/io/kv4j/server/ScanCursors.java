package io.kv4j.server;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * SCAN cursors. A cursor names the last key returned; the next call resumes just after it in the
 * engine's key order. Many clients (redis-cli, hiredis, go-redis) parse a cursor as an unsigned
 * 64-bit integer, so cursors are decimal numbers below 2^64:
 *
 * <ul>
 *   <li>keys of up to 7 bytes are encoded in the number itself: {@code 1 << (8 * length) | key}
 *       (always below 2^57, so stateless);
 *   <li>longer keys get an id in [2^63, 2^64) from a bounded table of recent cursors; an id that
 *       has been evicted gets an "invalid cursor" error.
 * </ul>
 *
 * "0" starts a scan and ends one.
 */
final class ScanCursors {
  static final String START = "0";
  private static final int MAX_INLINE = 7;

  private final AtomicLong nextId = new AtomicLong(Long.MIN_VALUE); // 2^63 as unsigned
  private final Map<Long, byte[]> table;

  ScanCursors(int capacity) {
    this.table =
        new LinkedHashMap<>(16, 0.75f, false) {
          private static final long serialVersionUID = 1L;

          @Override
          protected boolean removeEldestEntry(Map.Entry<Long, byte[]> eldest) {
            return size() > capacity;
          }
        };
  }

  String encode(byte[] key) {
    if (key.length <= MAX_INLINE) {
      long v = 1L << (8 * key.length);
      for (int i = 0; i < key.length; i++) {
        v |= (long) (key[i] & 0xFF) << (8 * (key.length - 1 - i));
      }
      return Long.toString(v);
    }
    long id = nextId.getAndIncrement();
    if (id == 0) { // wrapped past 2^64: start over in the upper half
      nextId.set(Long.MIN_VALUE);
      id = nextId.getAndIncrement();
    }
    synchronized (table) {
      table.put(id, key);
    }
    return Long.toUnsignedString(id);
  }

  /** The key to resume after, or null to start from the beginning. */
  byte[] decode(String cursor) {
    long v;
    try {
      v = Long.parseUnsignedLong(cursor);
    } catch (NumberFormatException e) {
      throw new CommandException("ERR invalid cursor");
    }
    if (v == 0) {
      return null;
    }
    if (v > 0) {
      int bit = 63 - Long.numberOfLeadingZeros(v);
      if (bit % 8 != 0) {
        throw new CommandException("ERR invalid cursor");
      }
      int length = bit / 8;
      byte[] key = new byte[length];
      for (int i = 0; i < length; i++) {
        key[i] = (byte) (v >>> (8 * (length - 1 - i)));
      }
      if (length == 0) {
        throw new CommandException("ERR invalid cursor");
      }
      return key;
    }
    byte[] key;
    synchronized (table) {
      key = table.get(v);
    }
    if (key == null) {
      throw new CommandException("ERR invalid cursor (expired: start the scan again with 0)");
    }
    return key;
  }
}
