package io.kv4j.server;

import io.kv4j.StoreException;
import io.kv4j.StoreIOException;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * MULTI, EXEC, DISCARD, WATCH and UNWATCH. MULTI queues commands (the dispatcher does the
 * queueing); EXEC locks the stripes of every key its commands and the watched keys name, so no
 * other write of this server interleaves, checks the WATCH versions, runs the commands against an
 * {@link Overlay} and commits the overlay's writes together.
 */
final class TransactionCommands {
  private final Dataset data;
  private final StoreHealth health;
  private final Commands commands;

  TransactionCommands(Dataset data, StoreHealth health, Commands commands) {
    this.data = data;
    this.health = health;
    this.commands = commands;
  }

  void multi(Session s, Request r, ByteBuf out) {
    if (s.queued != null) {
      throw new CommandException("ERR MULTI calls can not be nested");
    }
    s.beginMulti();
    Reply.ok(out);
  }

  void discard(Session s, Request r, ByteBuf out) {
    if (s.queued == null) {
      throw new CommandException("ERR DISCARD without MULTI");
    }
    s.endMulti();
    Reply.ok(out);
  }

  void watch(Session s, Request r, ByteBuf out) {
    if (s.queued != null) {
      throw new CommandException("ERR WATCH inside MULTI is not allowed");
    }
    if (s.watched == null) {
      s.watched = new ArrayList<>();
    }
    for (int i = 1; i < r.count(); i++) {
      byte[] key = r.bytes(i);
      ReentrantLock l = data.locks.lockFor(key);
      try {
        s.watched.add(new Session.Watch(key, data.versions.of(key)));
      } finally {
        l.unlock();
      }
    }
    Reply.ok(out);
  }

  void unwatch(Session s, Request r, ByteBuf out) {
    s.watched = null;
    Reply.ok(out);
  }

  /**
   * EXEC: locks the stripes of every key the queued commands and the watches name (so no other
   * write interleaves), checks the watched versions, runs the commands against an overlay, then
   * commits the overlay as one batch. Commands that scan (KEYS, SCAN, DBSIZE, RANDOMKEY) see the
   * store, not the transaction's own pending writes.
   */
  void exec(Session s, Request r, ByteBuf out) {
    if (s.queued == null) {
      throw new CommandException("ERR EXEC without MULTI");
    }
    List<byte[][]> queued = s.queued;
    List<Session.Watch> watched = s.watched;
    boolean aborted = s.queueFailed;
    s.endMulti();
    if (aborted) {
      throw new CommandException("EXECABORT Transaction discarded because of previous errors.");
    }
    List<byte[]> keys = new ArrayList<>();
    for (byte[][] args : queued) {
      commands.named(name(args)).addKeys(args, keys);
    }
    if (watched != null) {
      for (Session.Watch w : watched) {
        keys.add(w.key());
      }
    }
    int[] held = data.locks.lockAll(keys.toArray(new byte[0][]));
    try {
      if (watched != null) {
        for (Session.Watch w : watched) {
          if (data.versions.of(w.key()) != w.version()) {
            abortedReply(s, out);
            return;
          }
        }
      }
      run(s, queued, out);
    } finally {
      data.locks.unlockAll(held);
    }
  }

  private static String name(byte[][] args) {
    return new String(args[0], StandardCharsets.UTF_8);
  }

  /** EXEC's reply when a watched key changed: a null array. */
  private static void abortedReply(Session s, ByteBuf out) {
    if (s.resp3) {
      Reply.nil(out, true);
    } else {
      out.writeBytes(Reply.NIL_ARRAY2);
    }
  }

  /** Runs the queued commands against an overlay and commits it; the caller holds the locks. */
  private void run(Session s, List<byte[][]> queued, ByteBuf out) {
    boolean writes = false;
    for (byte[][] args : queued) {
      writes |= commands.named(name(args)).write;
    }
    if (writes) {
      health.checkWritable();
    }
    int mark = out.writerIndex();
    Reply.arrayHeader(out, queued.size());
    s.overlay = new Overlay();
    try {
      Request each = new Request();
      for (byte[][] args : queued) {
        each.reset(args);
        commands.run(commands.named(each.string(0)), s, each, out);
      }
    } finally {
      Overlay o = s.overlay;
      s.overlay = null;
      try {
        commit(s, o);
      } catch (StoreIOException e) {
        out.writerIndex(mark);
        Reply.error(out, StoreHealth.misconf(health.failed(e)));
      } catch (StoreException | IllegalArgumentException | UnsupportedOperationException e) {
        out.writerIndex(mark);
        Reply.error(out, "ERR transaction not committed: " + e.getMessage());
      }
    }
  }

  private void commit(Session s, Overlay o) {
    if (o.writes.isEmpty()) {
      return;
    }
    List<byte[]> keys = new ArrayList<>(o.writes.size());
    List<byte[]> values = new ArrayList<>(o.writes.size());
    o.writes.forEach(
        (k, v) -> {
          keys.add(k.bytes);
          values.add(v == Overlay.DELETED ? null : v);
        });
    data.apply(s, keys, values);
  }
}
