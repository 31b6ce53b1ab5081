package io.kv4j.server;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/** RESP encoders that write straight into the connection's output buffer. */
final class Reply {
  static final byte[] CRLF = {'\r', '\n'};
  static final byte[] OK = ascii("+OK\r\n");
  static final byte[] PONG = ascii("+PONG\r\n");
  static final byte[] NIL2 = ascii("$-1\r\n");
  static final byte[] NIL_ARRAY2 = ascii("*-1\r\n");
  static final byte[] NIL3 = ascii("_\r\n");
  static final byte[] ZERO = ascii(":0\r\n");
  static final byte[] ONE = ascii(":1\r\n");
  static final byte[] EMPTY_ARRAY = ascii("*0\r\n");
  private static final byte[][] SMALL_INTS = new byte[1024][];
  private static final byte[][] SMALL_BULK_HEADERS = new byte[4096][];

  static {
    for (int i = 0; i < SMALL_INTS.length; i++) {
      SMALL_INTS[i] = ascii(":" + i + "\r\n");
    }
    for (int i = 0; i < SMALL_BULK_HEADERS.length; i++) {
      SMALL_BULK_HEADERS[i] = ascii("$" + i + "\r\n");
    }
  }

  private Reply() {}

  static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  static void ok(ByteBuf out) {
    out.writeBytes(OK);
  }

  static void simple(ByteBuf out, String s) {
    out.writeByte('+');
    out.writeCharSequence(s, StandardCharsets.UTF_8);
    out.writeBytes(CRLF);
  }

  static void error(ByteBuf out, String message) {
    out.writeByte('-');
    // An error line must not contain CR or LF.
    out.writeCharSequence(message.replace('\r', ' ').replace('\n', ' '), StandardCharsets.UTF_8);
    out.writeBytes(CRLF);
  }

  static void integer(ByteBuf out, long v) {
    if (v >= 0 && v < SMALL_INTS.length) {
      out.writeBytes(SMALL_INTS[(int) v]);
      return;
    }
    out.writeByte(':');
    writeLong(out, v);
    out.writeBytes(CRLF);
  }

  static void nil(ByteBuf out, boolean resp3) {
    out.writeBytes(resp3 ? NIL3 : NIL2);
  }

  static void bulkHeader(ByteBuf out, int length) {
    if (length < SMALL_BULK_HEADERS.length) {
      out.writeBytes(SMALL_BULK_HEADERS[length]);
      return;
    }
    out.writeByte('$');
    writeLong(out, length);
    out.writeBytes(CRLF);
  }

  static void bulk(ByteBuf out, byte[] value) {
    out.ensureWritable(value.length + 16);
    bulkHeader(out, value.length);
    out.writeBytes(value);
    out.writeBytes(CRLF);
  }

  static void bulkOrNil(ByteBuf out, byte[] value, boolean resp3) {
    if (value == null) {
      nil(out, resp3);
    } else {
      bulk(out, value);
    }
  }

  static void bulk(ByteBuf out, String s) {
    bulk(out, s.getBytes(StandardCharsets.UTF_8));
  }

  static void arrayHeader(ByteBuf out, int n) {
    out.writeByte('*');
    writeLong(out, n);
    out.writeBytes(CRLF);
  }

  /** A map of {@code n} pairs: RESP3 map, or a flat array of 2n elements in RESP2. */
  static void mapHeader(ByteBuf out, int n, boolean resp3) {
    out.writeByte(resp3 ? '%' : '*');
    writeLong(out, resp3 ? n : 2L * n);
    out.writeBytes(CRLF);
  }

  /** A set of {@code n} elements: RESP3 set, or an array in RESP2. */
  static void setHeader(ByteBuf out, int n, boolean resp3) {
    out.writeByte(resp3 ? '~' : '*');
    writeLong(out, n);
    out.writeBytes(CRLF);
  }

  /** Writes the decimal digits of {@code v} without allocating. */
  static void writeLong(ByteBuf out, long v) {
    if (v == Long.MIN_VALUE) {
      out.writeCharSequence("-9223372036854775808", StandardCharsets.US_ASCII);
      return;
    }
    if (v < 0) {
      out.writeByte('-');
      v = -v;
    }
    int digits = 1;
    for (long p = 10; digits < 19 && v >= p; p *= 10) {
      digits++;
    }
    int at = out.writerIndex();
    out.ensureWritable(digits);
    for (int i = digits - 1; i >= 0; i--) {
      out.setByte(at + i, (int) ('0' + v % 10));
      v /= 10;
    }
    out.writerIndex(at + digits);
  }
}
