package io.kv4j.server;

import static io.kv4j.server.Dataset.KEEP;

import io.netty.buffer.ByteBuf;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The string commands: GET, SET and its read-modify-write relatives, ranges, MGET/MSET and the
 * counters (INCR, DECR, INCRBY, DECRBY, INCRBYFLOAT). Every read-modify-write goes through {@link
 * Dataset#update}, which makes it atomic.
 */
final class StringCommands {
  private final Dataset data;

  StringCommands(Dataset data) {
    this.data = data;
  }

  void get(Session s, Request r, ByteBuf out) {
    Reply.bulkOrNil(out, data.get(s, r.bytes(1)), s.resp3);
  }

  void set(Session s, Request r, ByteBuf out) {
    boolean nx = false;
    boolean xx = false;
    boolean get = false;
    for (int i = 3; i < r.count(); i++) {
      if (r.is(i, "NX")) {
        nx = true;
      } else if (r.is(i, "XX")) {
        xx = true;
      } else if (r.is(i, "GET")) {
        get = true;
      } else if (r.is(i, "KEEPTTL")) {
        continue; // keys never expire, so there is no TTL to keep or lose
      } else if (r.is(i, "EX") || r.is(i, "PX") || r.is(i, "EXAT") || r.is(i, "PXAT")) {
        throw noExpiry(r.string(i));
      } else {
        throw CommandException.syntax();
      }
    }
    if (nx && xx) {
      throw CommandException.syntax();
    }
    byte[] key = r.bytes(1);
    byte[] value = r.bytes(2);
    if (!nx && !xx && !get) {
      ReentrantLock l = data.locks.lockFor(s, key);
      try {
        data.put(s, key, value);
      } finally {
        if (l != null) {
          l.unlock();
        }
      }
      Reply.ok(out);
      return;
    }
    boolean onlyIfAbsent = nx;
    boolean onlyIfPresent = xx;
    byte[] old =
        data.update(
            s, key, o -> (onlyIfAbsent ? o == null : !onlyIfPresent || o != null) ? value : KEEP);
    boolean write = nx ? old == null : !xx || old != null;
    if (get) {
      Reply.bulkOrNil(out, old, s.resp3);
    } else if (write) {
      Reply.ok(out);
    } else {
      Reply.nil(out, s.resp3);
    }
  }

  private CommandException noExpiry(String option) {
    return new CommandException(
        "ERR SET "
            + option.toUpperCase(Locale.ROOT)
            + " is not supported: kv4j engine '"
            + data.info.engine()
            + "' has no key expiry");
  }

  void setnx(Session s, Request r, ByteBuf out) {
    byte[] value = r.bytes(2);
    byte[] old = data.update(s, r.bytes(1), o -> o == null ? value : KEEP);
    out.writeBytes(old == null ? Reply.ONE : Reply.ZERO);
  }

  void getset(Session s, Request r, ByteBuf out) {
    byte[] value = r.bytes(2);
    Reply.bulkOrNil(out, data.update(s, r.bytes(1), o -> value), s.resp3);
  }

  void getdel(Session s, Request r, ByteBuf out) {
    Reply.bulkOrNil(out, data.update(s, r.bytes(1), o -> o == null ? KEEP : null), s.resp3);
  }

  void getrange(Session s, Request r, ByteBuf out) {
    long start = r.longValue(2);
    long end = r.longValue(3);
    byte[] v = data.get(s, r.bytes(1));
    long len = v == null ? 0 : v.length;
    // Redis's rules: negative offsets count from the end, then both are clamped to the string.
    if (start < 0 && end < 0 && start > end) {
      Reply.bulk(out, new byte[0]);
      return;
    }
    if (start < 0) {
      start = Math.max(0, len + start);
    }
    if (end < 0) {
      end = Math.max(0, len + end);
    }
    if (end >= len) {
      end = len - 1;
    }
    if (len == 0 || start > end) {
      Reply.bulk(out, new byte[0]);
      return;
    }
    Reply.bulk(out, Arrays.copyOfRange(v, (int) start, (int) end + 1));
  }

  void setrange(Session s, Request r, ByteBuf out) {
    long offset;
    try {
      offset = r.longValue(2);
    } catch (CommandException e) {
      throw new CommandException("ERR value is not an integer or out of range");
    }
    if (offset < 0) {
      throw new CommandException("ERR offset is out of range");
    }
    byte[] key = r.bytes(1);
    int add = r.length(3);
    if (add > 0 && offset + add > data.info.limits().maxValueSize()) {
      throw data.tooBig();
    }
    byte[] tail = r.bytes(3);
    int[] length = new int[1];
    data.update(
        s,
        key,
        old -> {
          if (add == 0) {
            length[0] = old == null ? 0 : old.length;
            return KEEP;
          }
          int len = (int) Math.max(old == null ? 0 : old.length, offset + add);
          byte[] v = new byte[len]; // never the array read: a retried compare needs it intact
          if (old != null) {
            System.arraycopy(old, 0, v, 0, old.length);
          }
          System.arraycopy(tail, 0, v, (int) offset, add);
          length[0] = v.length;
          return v;
        });
    Reply.integer(out, length[0]);
  }

  void mget(Session s, Request r, ByteBuf out) {
    Reply.arrayHeader(out, r.count() - 1);
    for (int i = 1; i < r.count(); i++) {
      Reply.bulkOrNil(out, data.get(s, r.bytes(i)), s.resp3);
    }
  }

  void mset(Session s, Request r, ByteBuf out, boolean nx) {
    if (r.count() % 2 == 0) {
      throw new CommandException(
          "ERR wrong number of arguments for '" + (nx ? "msetnx" : "mset") + "' command");
    }
    int pairs = (r.count() - 1) / 2;
    List<byte[]> keys = new ArrayList<>(pairs);
    List<byte[]> values = new ArrayList<>(pairs);
    for (int i = 0; i < pairs; i++) {
      keys.add(r.bytes(1 + 2 * i));
      values.add(r.bytes(2 + 2 * i));
    }
    // On an event loop the stripes of every key are held already (Session.keysLocked).
    int[] held = s.keysLocked ? null : data.locks.lockAll(keys.toArray(new byte[0][]));
    try {
      if (nx) {
        for (byte[] k : keys) {
          if (data.contains(s, k)) {
            out.writeBytes(Reply.ZERO);
            return;
          }
        }
      }
      data.apply(s, keys, values);
    } finally {
      if (held != null) {
        data.locks.unlockAll(held);
      }
    }
    if (nx) {
      out.writeBytes(Reply.ONE);
    } else {
      Reply.ok(out);
    }
  }

  void strlen(Session s, Request r, ByteBuf out) {
    byte[] v = data.get(s, r.bytes(1));
    Reply.integer(out, v == null ? 0 : v.length);
  }

  void append(Session s, Request r, ByteBuf out) {
    byte[] tail = r.bytes(2);
    int[] length = new int[1];
    data.update(
        s,
        r.bytes(1),
        old -> {
          if (old == null) {
            length[0] = tail.length;
            return tail;
          }
          if ((long) old.length + tail.length > data.info.limits().maxValueSize()) {
            throw data.tooBig();
          }
          byte[] v = new byte[old.length + tail.length];
          System.arraycopy(old, 0, v, 0, old.length);
          System.arraycopy(tail, 0, v, old.length, tail.length);
          length[0] = v.length;
          return v;
        });
    Reply.integer(out, length[0]);
  }

  void decrby(Session s, Request r, ByteBuf out) {
    long d = r.longValue(2);
    if (d == Long.MIN_VALUE) {
      throw new CommandException("ERR decrement would overflow");
    }
    incrBy(s, r, out, -d);
  }

  void incrBy(Session s, Request r, ByteBuf out, long delta) {
    long[] next = new long[1];
    data.update(
        s,
        r.bytes(1),
        old -> {
          long current = old == null ? 0 : Numbers.parseStored(old);
          try {
            next[0] = Math.addExact(current, delta);
          } catch (ArithmeticException e) {
            throw new CommandException("ERR increment or decrement would overflow");
          }
          return Long.toString(next[0]).getBytes(StandardCharsets.US_ASCII);
        });
    Reply.integer(out, next[0]);
  }

  /**
   * INCRBYFLOAT in decimal arithmetic: the sum is exact (Redis uses a long double and prints 17
   * significant digits, so "10.5" + "0.1" is "10.6" in both), trailing zeros are dropped, and the
   * result never uses an exponent.
   */
  void incrbyfloat(Session s, Request r, ByteBuf out) {
    BigDecimal delta = decimal(r.bytes(2));
    byte[][] result = new byte[1][];
    data.update(
        s,
        r.bytes(1),
        old -> {
          BigDecimal current = old == null ? BigDecimal.ZERO : decimal(old);
          BigDecimal sum = current.add(delta);
          String text = sum.signum() == 0 ? "0" : sum.stripTrailingZeros().toPlainString();
          if (text.length() > 5000) {
            throw new CommandException("ERR increment would produce NaN or Infinity");
          }
          result[0] = text.getBytes(StandardCharsets.US_ASCII);
          return result[0];
        });
    Reply.bulk(out, result[0]);
  }

  private static BigDecimal decimal(byte[] b) {
    String t = new String(b, StandardCharsets.US_ASCII);
    if (t.isEmpty()
        || t.length() > 5000
        || Character.isWhitespace(t.charAt(0))
        || Character.isWhitespace(t.charAt(t.length() - 1))) {
      throw new CommandException("ERR value is not a valid float");
    }
    try {
      BigDecimal d = new BigDecimal(t);
      if (Math.abs((long) d.scale()) > 5000) {
        throw new CommandException("ERR increment would produce NaN or Infinity");
      }
      return d;
    } catch (NumberFormatException e) {
      throw new CommandException("ERR value is not a valid float");
    }
  }
}
