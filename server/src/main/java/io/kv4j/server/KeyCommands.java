package io.kv4j.server;

import io.kv4j.Cursor;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The generic key commands: DEL/UNLINK, EXISTS, TYPE, RENAME/RENAMENX, COPY, and the commands that
 * walk the key space (SCAN, KEYS, RANDOMKEY, DBSIZE) over the engine's ordered scan. The walking
 * commands see the store, not a running transaction's pending writes.
 */
final class KeyCommands {
  private final Dataset data;
  private final ScanCursors cursors = new ScanCursors(100_000);

  KeyCommands(Dataset data) {
    this.data = data;
  }

  void del(Session s, Request r, ByteBuf out) {
    long n = 0;
    for (int i = 1; i < r.count(); i++) {
      byte[] key = r.bytes(i);
      ReentrantLock l = data.locks.lockFor(s, key);
      try {
        if (data.contains(s, key)) {
          data.delete(s, key);
          n++;
        }
      } finally {
        if (l != null) {
          l.unlock();
        }
      }
    }
    Reply.integer(out, n);
  }

  void exists(Session s, Request r, ByteBuf out) {
    long n = 0;
    for (int i = 1; i < r.count(); i++) {
      if (data.contains(s, r.bytes(i))) {
        n++;
      }
    }
    Reply.integer(out, n);
  }

  void type(Session s, Request r, ByteBuf out) {
    Reply.simple(out, data.contains(s, r.bytes(1)) ? "string" : "none");
  }

  void rename(Session s, Request r, ByteBuf out, boolean nx) {
    byte[] from = r.bytes(1);
    byte[] to = r.bytes(2);
    int[] held = data.locks.lockAll(new byte[][] {from, to});
    try {
      byte[] v = data.get(s, from);
      if (v == null) {
        throw new CommandException("ERR no such key");
      }
      if (Arrays.equals(from, to)) {
        out.writeBytes(nx ? Reply.ZERO : Reply.OK);
        return;
      }
      if (nx && data.contains(s, to)) {
        out.writeBytes(Reply.ZERO);
        return;
      }
      data.apply(s, List.of(to, from), Arrays.asList(v, null));
      out.writeBytes(nx ? Reply.ONE : Reply.OK);
    } finally {
      data.locks.unlockAll(held);
    }
  }

  void copy(Session s, Request r, ByteBuf out) {
    boolean replace = false;
    for (int i = 3; i < r.count(); i++) {
      if (r.is(i, "REPLACE")) {
        replace = true;
      } else if (r.is(i, "DB") && i + 1 < r.count()) {
        if (r.longValue(++i) != s.db) {
          throw new CommandException(
              "ERR COPY to another database is not supported by kv4j-server (only DB "
                  + s.db
                  + ")");
        }
      } else {
        throw CommandException.syntax();
      }
    }
    byte[] from = r.bytes(1);
    byte[] to = r.bytes(2);
    if (Arrays.equals(from, to)) {
      throw new CommandException("ERR source and destination objects are the same");
    }
    int[] held = data.locks.lockAll(new byte[][] {from, to});
    try {
      byte[] v = data.get(s, from);
      if (v == null || (!replace && data.contains(s, to))) {
        out.writeBytes(Reply.ZERO);
        return;
      }
      data.put(s, to, v);
      out.writeBytes(Reply.ONE);
    } finally {
      data.locks.unlockAll(held);
    }
  }

  void scan(Session s, Request r, ByteBuf out) {
    byte[] resume = cursors.decode(r.string(1));
    Glob glob = null;
    long count = 10;
    boolean typeMatches = true;
    for (int i = 2; i < r.count(); i++) {
      if (i + 1 >= r.count()) {
        throw CommandException.syntax();
      }
      if (r.is(i, "MATCH")) {
        glob = new Glob(r.bytes(++i));
      } else if (r.is(i, "COUNT")) {
        count = r.longValue(++i);
        if (count < 1) {
          throw CommandException.syntax();
        }
      } else if (r.is(i, "TYPE")) {
        typeMatches = r.is(++i, "STRING");
      } else {
        throw CommandException.syntax();
      }
    }
    List<byte[]> keys = new ArrayList<>();
    String next;
    if (!data.ordered) {
      // No order to resume in: one pass returns everything.
      collect(s, rangeFor(glob), glob, keys);
      next = ScanCursors.START;
    } else {
      next = page(s, resume, glob, count, keys);
    }
    Reply.arrayHeader(out, 2);
    Reply.bulk(out, next);
    if (!typeMatches) {
      keys.clear();
    }
    Reply.arrayHeader(out, keys.size());
    for (byte[] k : keys) {
      Reply.bulk(out, k);
    }
  }

  /**
   * One SCAN page: examines up to {@code count} keys after {@code resume} (null: from the start),
   * adds the matching visible ones to {@code keys}; returns the next cursor.
   */
  private String page(Session s, byte[] resume, Glob glob, long count, List<byte[]> keys) {
    KeyRange range = rangeFor(glob);
    if (resume != null) {
      if (!range.belowUpper(resume)) {
        return ScanCursors.START;
      } else if (range.aboveLower(resume)) {
        range = range.gt(resume);
      }
    }
    long examined = 0;
    byte[] last = null;
    try (Cursor c = data.of(s).scan(range.limit(Math.min(count, Long.MAX_VALUE - 1) + 1))) {
      while (c.hasNext()) {
        if (examined == count) {
          return cursors.encode(last);
        }
        Entry e = c.next();
        examined++;
        last = e.key();
        if ((glob == null || glob.matches(last)) && !data.hidden(s, last)) {
          keys.add(last);
        }
      }
    }
    return ScanCursors.START;
  }

  private static KeyRange rangeFor(Glob glob) {
    if (glob == null) {
      return KeyRange.all();
    }
    byte[] prefix = glob.literalPrefix();
    return prefix.length == 0 ? KeyRange.all() : KeyRange.prefix(prefix);
  }

  private void collect(Session s, KeyRange range, Glob glob, List<byte[]> keys) {
    try (Cursor c = data.of(s).scan(range)) {
      while (c.hasNext()) {
        byte[] k = c.next().key();
        if ((glob == null || glob.matches(k)) && !data.hidden(s, k)) {
          keys.add(k);
        }
      }
    }
  }

  void keys(Session s, Request r, ByteBuf out) {
    Glob glob = new Glob(r.bytes(1));
    List<byte[]> keys = new ArrayList<>();
    collect(s, rangeFor(glob), glob, keys);
    Reply.arrayHeader(out, keys.size());
    for (byte[] k : keys) {
      Reply.bulk(out, k);
    }
  }

  void dbsize(Session s, Request r, ByteBuf out) {
    AsyncFlush f = data.flushing();
    if (f != null && s.db == 0) {
      // Only keys written since the flush began are visible.
      long n = 0;
      for (Key k : f.kept) {
        if (data.store().contains(k.bytes)) {
          n++;
        }
      }
      Reply.integer(out, n);
      return;
    }
    Reply.integer(out, data.of(s).stats().keyCount());
  }

  /**
   * RANDOMKEY: on an ordered engine, the first visible key at or after a random point between the
   * first and the last key (by their first eight bytes), so it costs two short scans and a seek;
   * keys after large gaps are more likely than others. Unordered engines return their first key.
   */
  void randomkey(Session s, Request r, ByteBuf out) {
    byte[] first = firstVisible(s, KeyRange.all());
    if (first == null || !data.ordered) {
      Reply.bulkOrNil(out, first, s.resp3);
      return;
    }
    byte[] last = null;
    try (Cursor c = data.of(s).scan(KeyRange.all().reverse().limit(1))) {
      if (c.hasNext()) {
        last = c.next().key();
      }
    }
    long lo = prefix64(first);
    long hi = last == null ? lo : prefix64(last);
    byte[] pick = first;
    if (Long.compareUnsigned(hi, lo) > 0) {
      long point = lo + (long) (ThreadLocalRandom.current().nextDouble() * (double) (hi - lo));
      byte[] from = new byte[8];
      for (int i = 0; i < 8; i++) {
        from[i] = (byte) (point >>> (56 - 8 * i));
      }
      byte[] found = firstVisible(s, KeyRange.all().gte(from));
      pick = found == null ? first : found;
    }
    Reply.bulk(out, pick);
  }

  private static long prefix64(byte[] k) {
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = (v << 8) | (i < k.length ? k[i] & 0xFF : 0);
    }
    return v;
  }

  private byte[] firstVisible(Session s, KeyRange range) {
    try (Cursor c = data.of(s).scan(range)) {
      while (c.hasNext()) {
        byte[] k = c.next().key();
        if (!data.hidden(s, k)) {
          return k;
        }
      }
    }
    return null;
  }
}
