package io.kv4j.server;

import io.netty.buffer.ByteBuf;

/** Splits an inline request line like Redis's sdssplitargs (quotes and escapes). */
final class InlineSplitter {
  private InlineSplitter() {}

  /**
   * Splits bytes [from, to) of {@code src} into arguments copied to {@code dst}, registering each
   * in {@code request}. Returns false on unbalanced quotes.
   */
  static boolean split(byte[] src, int from, int to, ByteBuf dst, Request request) {
    int i = from;
    while (true) {
      while (i < to && isSpace(src[i])) {
        i++;
      }
      if (i >= to) {
        return true;
      }
      int start = dst.writerIndex();
      boolean inDq = false;
      boolean inSq = false;
      boolean done = false;
      while (!done) {
        if (inDq) {
          if (i >= to) {
            return false;
          }
          byte c = src[i];
          if (c == '\\' && i + 1 < to) {
            i = unescape(src, i, to, dst);
          } else if (c == '"') {
            if (i + 1 < to && !isSpace(src[i + 1])) {
              return false; // closing quote must be followed by a space
            }
            done = true;
          } else {
            dst.writeByte(c);
          }
        } else if (inSq) {
          if (i >= to) {
            return false;
          }
          byte c = src[i];
          if (c == '\\' && i + 1 < to && src[i + 1] == '\'') {
            i++;
            dst.writeByte('\'');
          } else if (c == '\'') {
            if (i + 1 < to && !isSpace(src[i + 1])) {
              return false;
            }
            done = true;
          } else {
            dst.writeByte(c);
          }
        } else {
          if (i >= to) {
            break;
          }
          byte c = src[i];
          if (isSpace(c)) {
            done = true;
          } else if (c == '"') {
            inDq = true;
          } else if (c == '\'') {
            inSq = true;
          } else {
            dst.writeByte(c);
          }
        }
        if (i < to) {
          i++;
        }
      }
      request.add(start, dst.writerIndex() - start);
    }
  }

  /**
   * Writes the escape sequence at {@code src[i]} (a backslash inside double quotes: {@code \xHH},
   * {@code \n}, {@code \r}, {@code \t}, {@code \b}, {@code \a}, or any other byte as itself);
   * returns the index of its last byte.
   */
  private static int unescape(byte[] src, int i, int to, ByteBuf dst) {
    if (i + 3 < to && src[i + 1] == 'x' && hex(src[i + 2]) >= 0 && hex(src[i + 3]) >= 0) {
      dst.writeByte(hex(src[i + 2]) * 16 + hex(src[i + 3]));
      return i + 3;
    }
    byte e = src[i + 1];
    dst.writeByte(
        switch (e) {
          case 'n' -> '\n';
          case 'r' -> '\r';
          case 't' -> '\t';
          case 'b' -> '\b';
          case 'a' -> 7;
          default -> e;
        });
    return i + 1;
  }

  private static boolean isSpace(byte c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0x0b || c == '\f';
  }

  private static int hex(byte c) {
    if (c >= '0' && c <= '9') {
      return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
      return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
      return c - 'A' + 10;
    }
    return -1;
  }
}
