package io.kv4j.sqlite;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * One SQLite record (a row's or an index entry's payload), decoded with every length checked: a
 * header (its size as a varint, then one serial type varint per column) and the column values in
 * order. A record whose header and values do not exactly fill the payload is malformed.
 *
 * <table>
 *   <caption>serial types</caption>
 *   <tr><th>type</th><th>bytes</th><th>value</th></tr>
 *   <tr><td>0</td><td>0</td><td>NULL</td></tr>
 *   <tr><td>1, 2, 3, 4, 5, 6</td><td>1, 2, 3, 4, 6, 8</td><td>big-endian two's complement
 *       integer</td></tr>
 *   <tr><td>7</td><td>8</td><td>IEEE 754 float</td></tr>
 *   <tr><td>8, 9</td><td>0</td><td>the integers 0 and 1</td></tr>
 *   <tr><td>10, 11</td><td></td><td>reserved: malformed</td></tr>
 *   <tr><td>N ≥ 12, even</td><td>(N−12)/2</td><td>BLOB</td></tr>
 *   <tr><td>N ≥ 13, odd</td><td>(N−13)/2</td><td>text in the database's encoding</td></tr>
 * </table>
 */
final class Record {
  private final byte[] payload;
  private final long[] types;
  private final int[] starts;

  private Record(byte[] payload, long[] types, int[] starts) {
    this.payload = payload;
    this.types = types;
    this.starts = starts;
  }

  /** Decodes a payload; null if it is malformed. */
  static Record decode(byte[] payload) {
    long[] hs = BTreePage.varint(payload, 0, payload.length);
    if (hs == null || hs[0] < hs[1] || hs[0] > payload.length) {
      return null;
    }
    int headerEnd = (int) hs[0];
    int at = (int) hs[1];
    long[] types = new long[8];
    int[] starts = new int[9];
    int n = 0;
    long body = headerEnd;
    while (at < headerEnd) {
      long[] t = BTreePage.varint(payload, at, headerEnd);
      if (t == null) {
        return null;
      }
      at += (int) t[1];
      long size = size(t[0]);
      if (size < 0) {
        return null;
      }
      if (n == types.length) {
        types = Arrays.copyOf(types, n * 2);
        starts = Arrays.copyOf(starts, n * 2 + 1);
      }
      types[n] = t[0];
      starts[n] = (int) Math.min(body, Integer.MAX_VALUE);
      body += size;
      n++;
      if (body > payload.length) {
        return null;
      }
    }
    if (body != payload.length) {
      return null;
    }
    starts[n] = (int) body;
    return new Record(payload, Arrays.copyOf(types, n), Arrays.copyOf(starts, n + 1));
  }

  /** Bytes of a serial type's value; -1 for the reserved types. */
  private static long size(long t) {
    if (t >= 12) {
      return (t - 12) / 2;
    }
    return switch ((int) t) {
      case 0, 8, 9 -> 0;
      case 1 -> 1;
      case 2 -> 2;
      case 3 -> 3;
      case 4 -> 4;
      case 5 -> 6;
      case 6, 7 -> 8;
      default -> -1;
    };
  }

  int columns() {
    return types.length;
  }

  /** Whether column {@code i} exists and is a BLOB or text (bytes). */
  boolean isBytes(int i) {
    return i < types.length && types[i] >= 12;
  }

  /** Whether column {@code i} exists and is a BLOB. */
  boolean isBlob(int i) {
    return i < types.length && types[i] >= 12 && types[i] % 2 == 0;
  }

  /** Whether column {@code i} exists and is an integer. */
  boolean isInteger(int i) {
    return i < types.length && ((types[i] >= 1 && types[i] <= 6) || types[i] == 8 || types[i] == 9);
  }

  /** Whether column {@code i} exists and is NULL. */
  boolean isNull(int i) {
    return i < types.length && types[i] == 0;
  }

  /** The bytes of a BLOB or text column. */
  byte[] bytes(int i) {
    return Arrays.copyOfRange(payload, starts[i], starts[i + 1]);
  }

  /** The bytes of a BLOB or text column compared with {@code b}, without copying. */
  boolean bytesEqual(int i, byte[] b) {
    return Arrays.equals(payload, starts[i], starts[i + 1], b, 0, b.length);
  }

  /** A text column in the database's encoding (1 UTF-8, 2 UTF-16le, 3 UTF-16be). */
  String text(int i, int encoding) {
    Charset cs =
        switch (encoding) {
          case 2 -> StandardCharsets.UTF_16LE;
          case 3 -> StandardCharsets.UTF_16BE;
          default -> StandardCharsets.UTF_8;
        };
    return new String(payload, starts[i], starts[i + 1] - starts[i], cs);
  }

  /** An integer column's value. */
  long integer(int i) {
    long t = types[i];
    if (t == 8) {
      return 0;
    }
    if (t == 9) {
      return 1;
    }
    int from = starts[i];
    int len = starts[i + 1] - from;
    long v = payload[from]; // sign-extended
    for (int k = 1; k < len; k++) {
      v = (v << 8) | (payload[from + k] & 0xff);
    }
    return v;
  }
}
