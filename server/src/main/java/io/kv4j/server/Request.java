package io.kv4j.server;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The arguments of one command as views (offset, length) into a buffer the parser owns. Reused for
 * every command of a connection; valid only while the command runs.
 */
final class Request {
  private byte[] buf;
  private int base;
  private int count;
  private int[] off = new int[16];
  private int[] len = new int[16];

  void reset(byte[] buffer, int baseIndex) {
    this.buf = buffer;
    this.base = baseIndex;
    this.count = 0;
  }

  /** Continues a partly parsed request whose buffer may have moved; keeps the first args. */
  void reset(byte[] buffer, int baseIndex, int keep) {
    this.buf = buffer;
    this.base = baseIndex;
    this.count = keep;
  }

  /** Points at a copy of the given arguments (a command queued by MULTI). */
  void reset(byte[][] args) {
    int total = 0;
    for (byte[] a : args) {
      total += a.length;
    }
    byte[] all = new byte[total];
    this.buf = all;
    this.base = 0;
    this.count = 0;
    int at = 0;
    for (byte[] a : args) {
      System.arraycopy(a, 0, all, at, a.length);
      add(at, a.length);
      at += a.length;
    }
  }

  void add(int offset, int length) {
    if (count == off.length) {
      off = Arrays.copyOf(off, count * 2);
      len = Arrays.copyOf(len, count * 2);
    }
    off[count] = offset;
    len[count] = length;
    count++;
  }

  int count() {
    return count;
  }

  int length(int i) {
    return len[i];
  }

  byte byteAt(int i, int j) {
    return buf[base + off[i] + j];
  }

  /** {@link Arrays#hashCode(byte[])} of argument {@code i}, without copying it. */
  int hash(int i) {
    int h = 1;
    for (int j = base + off[i], end = j + len[i]; j < end; j++) {
      h = 31 * h + buf[j];
    }
    return h;
  }

  /** A fresh copy of argument {@code i} (the Store API takes byte arrays). */
  byte[] bytes(int i) {
    int from = base + off[i];
    return Arrays.copyOfRange(buf, from, from + len[i]);
  }

  String string(int i) {
    return new String(buf, base + off[i], len[i], StandardCharsets.UTF_8);
  }

  /** Case-insensitive comparison with an upper-case ASCII word. */
  boolean is(int i, String upper) {
    int n = len[i];
    if (n != upper.length()) {
      return false;
    }
    int at = base + off[i];
    for (int j = 0; j < n; j++) {
      int c = buf[at + j];
      if (c >= 'a' && c <= 'z') {
        c -= 32;
      }
      if (c != upper.charAt(j)) {
        return false;
      }
    }
    return true;
  }

  /** Copies argument {@code i} into {@code out} as a bulk string. */
  void writeBulk(int i, ByteBuf out) {
    out.ensureWritable(len[i] + 16);
    Reply.bulkHeader(out, len[i]);
    out.writeBytes(buf, base + off[i], len[i]);
    out.writeBytes(Reply.CRLF);
  }

  /** Parses argument {@code i} as a signed 64-bit decimal the way Redis does, or throws. */
  long longValue(int i) {
    long v = Numbers.parseLong(buf, base + off[i], len[i]);
    if (v == Numbers.INVALID && !Numbers.isMinValue(buf, base + off[i], len[i])) {
      throw new CommandException("ERR value is not an integer or out of range");
    }
    return v;
  }

  /** The lower-case command name, for messages; allocates. */
  String name() {
    return count == 0 ? "" : string(0).toLowerCase(java.util.Locale.ROOT);
  }
}
