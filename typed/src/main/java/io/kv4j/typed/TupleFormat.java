package io.kv4j.typed;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

/**
 * The tuple byte format: FoundationDB's tuple layer where the types overlap (see {@link Tuple} for
 * the order it preserves). Each element is a type code followed by its body:
 *
 * <pre>
 * code        element           body
 * 0x00        null              none (0x00 0xFF inside a nested tuple)
 * 0x01        byte[]            bytes, each 0x00 written 0x00 0xFF, then 0x00
 * 0x02        String            UTF-8, each 0x00 written 0x00 0xFF, then 0x00
 * 0x05        nested Tuple      the elements (null as 0x00 0xFF), then 0x00
 * 0x0C..0x13  negative long     n = 0x14 - code bytes: the low n bytes of (value - 1), big-endian
 *                               (one's complement of the magnitude), n the magnitude's byte length
 * 0x14        zero              none
 * 0x15..0x1C  positive long     n = code - 0x14 bytes: the value, big-endian, n minimal
 * 0x20        float             4 bytes: IEEE bits big-endian; sign set: all bits flipped,
 *                               sign clear: only the sign bit flipped
 * 0x21        double            8 bytes, the same transform
 * 0x26, 0x27  false, true       none
 * 0x30        UUID              16 bytes: most then least significant 64 bits, big-endian
 * </pre>
 *
 * Decoding is strict: it accepts exactly what encoding produces (minimal integer lengths, valid
 * UTF-8, every terminator present), so a decoded tuple re-encodes to the same bytes.
 */
final class TupleFormat {
  static final int NULL = 0x00;
  static final int BYTES = 0x01;
  static final int STRING = 0x02;
  static final int NESTED = 0x05;
  static final int INT_ZERO = 0x14;
  static final int FLOAT = 0x20;
  static final int DOUBLE = 0x21;
  static final int FALSE = 0x26;
  static final int TRUE = 0x27;
  static final int UUID_CODE = 0x30;

  private TupleFormat() {}

  /** Encodes the elements of a top-level tuple; elements are already normalized by Tuple. */
  static byte[] encode(List<Object> items) {
    Sink out = new Sink();
    for (Object item : items) {
      encodeItem(out, item, false);
    }
    return out.toByteArray();
  }

  private static void encodeItem(Sink out, Object item, boolean nested) {
    if (item == null) {
      out.write(NULL);
      if (nested) {
        out.write(0xFF); // inside a nested tuple a bare 0x00 would end it
      }
    } else if (item instanceof byte[] b) {
      out.write(BYTES);
      for (byte x : b) {
        out.write(x);
        if (x == 0) {
          out.write(0xFF);
        }
      }
      out.write(0x00);
    } else if (item instanceof String s) {
      out.write(STRING);
      writeUtf8(out, s);
      out.write(0x00);
    } else if (item instanceof Long v) {
      encodeLong(out, v);
    } else if (item instanceof Float f) {
      int bits = Float.floatToRawIntBits(f);
      bits = bits < 0 ? ~bits : bits ^ Integer.MIN_VALUE;
      out.write(FLOAT);
      for (int shift = 24; shift >= 0; shift -= 8) {
        out.write(bits >>> shift);
      }
    } else if (item instanceof Double d) {
      long bits = Double.doubleToRawLongBits(d);
      bits = bits < 0 ? ~bits : bits ^ Long.MIN_VALUE;
      out.write(DOUBLE);
      writeLong(out, bits, 8);
    } else if (item instanceof Boolean b) {
      out.write(b ? TRUE : FALSE);
    } else if (item instanceof UUID u) {
      out.write(UUID_CODE);
      writeLong(out, u.getMostSignificantBits(), 8);
      writeLong(out, u.getLeastSignificantBits(), 8);
    } else if (item instanceof Tuple t) {
      out.write(NESTED);
      for (Object inner : t.itemsView()) {
        encodeItem(out, inner, true);
      }
      out.write(0x00);
    } else {
      throw new IllegalArgumentException(
          "not a tuple element: " + item.getClass().getName()); // Tuple normalizes first
    }
  }

  private static void encodeLong(Sink out, long v) {
    if (v == 0) {
      out.write(INT_ZERO);
    } else if (v > 0) {
      int n = byteLength(v);
      out.write(INT_ZERO + n);
      writeLong(out, v, n);
    } else {
      int n = byteLength(-v); // -Long.MIN_VALUE is 2^63 read unsigned: 8 bytes
      out.write(INT_ZERO - n);
      writeLong(out, v - 1, n); // low n bytes of v - 1 = 2^(8n) - 1 - |v|
    }
  }

  /** Bytes needed for a non-zero magnitude read as unsigned. */
  static int byteLength(long magnitude) {
    return (64 - Long.numberOfLeadingZeros(magnitude) + 7) / 8;
  }

  private static void writeLong(Sink out, long v, int n) {
    for (int shift = 8 * (n - 1); shift >= 0; shift -= 8) {
      out.write((int) (v >>> shift));
    }
  }

  /**
   * UTF-8 with every 0x00 escaped. Written by hand (not String.getBytes) so that an unpaired
   * surrogate is refused instead of silently becoming '?', which would break the round trip.
   */
  private static void writeUtf8(Sink out, String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == 0) {
        out.write(0x00);
        out.write(0xFF);
      } else if (c < 0x80) {
        out.write(c);
      } else if (c < 0x800) {
        out.write(0xC0 | (c >> 6));
        out.write(0x80 | (c & 0x3F));
      } else if (Character.isSurrogate(c)) {
        if (!Character.isHighSurrogate(c)
            || i + 1 >= s.length()
            || !Character.isLowSurrogate(s.charAt(i + 1))) {
          throw new IllegalArgumentException(
              "string has an unpaired surrogate at index "
                  + i
                  + " (not valid Unicode, so it has no UTF-8 encoding)");
        }
        int cp = Character.toCodePoint(c, s.charAt(++i));
        out.write(0xF0 | (cp >> 18));
        out.write(0x80 | ((cp >> 12) & 0x3F));
        out.write(0x80 | ((cp >> 6) & 0x3F));
        out.write(0x80 | (cp & 0x3F));
      } else {
        out.write(0xE0 | (c >> 12));
        out.write(0x80 | ((c >> 6) & 0x3F));
        out.write(0x80 | (c & 0x3F));
      }
    }
  }

  /** A growable byte array; unlike ByteArrayOutputStream it takes no lock per byte. */
  private static final class Sink {
    private byte[] buf = new byte[32];
    private int count;

    void write(int b) {
      if (count == buf.length) {
        buf = Arrays.copyOf(buf, count * 2);
      }
      buf[count++] = (byte) b;
    }

    byte[] toByteArray() {
      return Arrays.copyOf(buf, count);
    }
  }

  /** Decodes {@code length} bytes at {@code offset} as a top-level tuple. */
  static List<Object> decode(byte[] bytes, int offset, int length) {
    Reader r = new Reader(bytes, offset, offset + length);
    List<Object> items = new ArrayList<>();
    while (r.pos < r.end) {
      items.add(r.item());
    }
    return items;
  }

  /** A cursor over encoded bytes; every error names the offset in the caller's array. */
  private static final class Reader {
    private final byte[] b;
    private int pos;
    private final int end;

    Reader(byte[] b, int pos, int end) {
      this.b = b;
      this.pos = pos;
      this.end = end;
    }

    Object item() {
      int at = pos;
      int code = b[pos++] & 0xFF;
      switch (code) {
        case NULL:
          return null;
        case BYTES:
          return escaped(at, "byte string");
        case STRING:
          return utf8(at);
        case NESTED:
          return nested(at);
        case FLOAT:
          {
            int bits = (int) fixed(at, 4, "float");
            return Float.intBitsToFloat(bits < 0 ? bits ^ Integer.MIN_VALUE : ~bits);
          }
        case DOUBLE:
          {
            long bits = fixed(at, 8, "double");
            return Double.longBitsToDouble(bits < 0 ? bits ^ Long.MIN_VALUE : ~bits);
          }
        case FALSE:
          return Boolean.FALSE;
        case TRUE:
          return Boolean.TRUE;
        case UUID_CODE:
          {
            long msb = fixed(at, 8, "UUID");
            long lsb = fixed(at, 8, "UUID");
            return new UUID(msb, lsb);
          }
        default:
          if (code >= INT_ZERO - 8 && code <= INT_ZERO + 8) {
            return integer(at, code);
          }
          throw error(at, "expected a type code, found " + describeCode(code));
      }
    }

    private Long integer(int at, int code) {
      int n = Math.abs(code - INT_ZERO);
      if (n == 0) {
        return 0L;
      }
      long u = fixed(at, n, "integer");
      long v;
      if (code > INT_ZERO) {
        if (n == 8 && u < 0) {
          throw error(
              at,
              "integer above Long.MAX_VALUE (FoundationDB's unsigned 64-bit range is not"
                  + " supported)");
        }
        v = u;
      } else {
        v = n == 8 ? u + 1 : u - ((1L << (8 * n)) - 1);
        if (n == 8 && v > 0) {
          throw error(
              at,
              "integer below Long.MIN_VALUE (FoundationDB's 64-bit negative range is not"
                  + " supported)");
        }
      }
      if (v == 0 || byteLength(v < 0 ? -v : v) != n) {
        throw error(at, "non-canonical integer: " + v + " is written in " + n + " bytes");
      }
      return v;
    }

    private long fixed(int at, int n, String what) {
      if (end - pos < n) {
        throw error(
            pos,
            "expected "
                + n
                + " bytes of "
                + what
                + " (type code at offset "
                + at
                + "), found "
                + (end - pos));
      }
      long v = 0;
      for (int i = 0; i < n; i++) {
        v = (v << 8) | (b[pos++] & 0xFF);
      }
      return v;
    }

    private byte[] escaped(int at, String what) {
      // First find the terminator (a 0x00 not followed by 0xFF) and count the escapes, then copy.
      int escapes = 0;
      int i = pos;
      while (true) {
        if (i >= end) {
          throw error(i, "expected the 0x00 that ends the " + what + " starting at offset " + at);
        }
        if (b[i] == 0) {
          if (i + 1 < end && b[i + 1] == (byte) 0xFF) {
            escapes++;
            i += 2;
            continue;
          }
          break;
        }
        i++;
      }
      byte[] out = new byte[i - pos - escapes];
      for (int o = 0; pos < i; pos++) {
        out[o++] = b[pos];
        if (b[pos] == 0) {
          pos++; // skip the 0xFF of the escape
        }
      }
      pos = i + 1;
      return out;
    }

    private String utf8(int at) {
      byte[] raw = escaped(at, "string");
      String fast = new String(raw, StandardCharsets.UTF_8);
      if (fast.indexOf('\uFFFD') < 0) {
        return fast; // nothing was replaced, so the bytes were valid UTF-8
      }
      try { // a replacement character: decode strictly, to refuse malformed bytes
        return StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT)
            .decode(ByteBuffer.wrap(raw))
            .toString();
      } catch (CharacterCodingException e) {
        throw error(at, "expected UTF-8 in the string starting here (" + e.getMessage() + ")");
      }
    }

    private Tuple nested(int at) {
      List<Object> items = new ArrayList<>();
      while (true) {
        if (pos >= end) {
          throw error(pos, "expected the 0x00 that ends the nested tuple starting at offset " + at);
        }
        if (b[pos] == 0) {
          if (pos + 1 < end && b[pos + 1] == (byte) 0xFF) {
            items.add(null);
            pos += 2;
          } else {
            pos++;
            return Tuple.fromDecoded(items);
          }
        } else {
          items.add(item());
        }
      }
    }

    private static String describeCode(int code) {
      String hex = String.format("0x%02x", code);
      if (code == 0x03 || code == 0x04) {
        return hex + " (FoundationDB's deprecated nested tuple)";
      }
      if (code == 0x0A || code == 0x0B || code == 0x1D || code == 0x1E) {
        return hex + " (FoundationDB's integer beyond 64 bits, not supported)";
      }
      if (code == 0x22 || code == 0x23 || code == 0x24) {
        return hex + " (long double or decimal, not supported)";
      }
      if (code == 0x25) {
        return hex + " (FoundationDB's deprecated true)";
      }
      if (code >= 0x31 && code <= 0x33) {
        return hex + " (identifier or versionstamp, not supported)";
      }
      return hex;
    }

    private static IllegalArgumentException error(int offset, String what) {
      return new IllegalArgumentException(
          "invalid tuple encoding at offset " + offset + ": " + what);
    }
  }
}
