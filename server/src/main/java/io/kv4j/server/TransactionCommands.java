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
 * {@link Overlay} and commits the overlay's writes together. On a store shared with other servers
 * ({@link Dataset#shared}) the commit is conditional and EXEC may run again: see {@link
 * SharedStoreTransaction}.
 */
final class TransactionCommands {
  private final Dataset data;
  private final StoreHealth health;
  private final Commands commands;
  private final SharedStoreTransaction shared;

  TransactionCommands(
      Dataset data, StoreHealth health, Commands commands, SharedStoreTransaction shared) {
    this.data = data;
    this.health = health;
    this.commands = commands;
    this.shared = shared;
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
    s.watch(data.versions);
    for (int i = 1; i < r.count(); i++) {
      byte[] key = r.bytes(i);
      ReentrantLock l = data.locks.lockFor(key);
      try {
        // On a shared store the value is what EXEC's commit requires the key still to hold.
        byte[] value = data.shared ? data.of(s).get(key) : null;
        s.addWatch(new Session.Watch(key, data.versions.of(key), s.db, value));
      } finally {
        l.unlock();
      }
    }
    Reply.ok(out);
  }

  void unwatch(Session s, Request r, ByteBuf out) {
    s.unwatch();
    Reply.ok(out);
  }

  /**
   * EXEC: locks the stripes of every key the queued commands and the watches name (so no other
   * write of this server interleaves), checks the watched versions (which also catch a change and
   * change back on this server), runs the commands against an overlay, then commits the overlay as
   * one batch — on a shared store conditionally, running again when another writer changed a key it
   * read. Commands that scan (KEYS, SCAN, DBSIZE, RANDOMKEY) see the store, not the transaction's
   * own pending writes.
   */
  void exec(Session s, Request r, ByteBuf out) {
    if (s.queued == null) {
      throw new CommandException("ERR EXEC without MULTI");
    }
    List<byte[][]> queued = s.queued;
    List<Session.Watch> watched = s.watched();
    WatchVersions counted = s.detachWatches(); // counted until their versions are compared
    boolean aborted = s.queueFailed;
    long charge = s.detachQueueCharge(); // the queue stays charged until it has run
    s.endMulti();
    try {
      if (aborted) {
        throw new CommandException("EXECABORT Transaction discarded because of previous errors.");
      }
      exec(s, queued, watched, out);
    } finally {
      s.release(charge);
      if (counted != null) {
        counted.watcherGone();
      }
    }
  }

  private void exec(Session s, List<byte[][]> queued, List<Session.Watch> watched, ByteBuf out) {
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
      if (data.shared) {
        runShared(s, queued, watched, out);
      } else {
        run(s, queued, out);
      }
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

  private void checkWritable(List<byte[][]> queued) {
    for (byte[][] args : queued) {
      if (commands.named(name(args)).write) {
        health.checkWritable();
        return;
      }
    }
  }

  /** Runs the queued commands against an overlay and commits it; the caller holds the locks. */
  private void run(Session s, List<byte[][]> queued, ByteBuf out) {
    checkWritable(queued);
    int mark = out.writerIndex();
    Reply.arrayHeader(out, queued.size());
    s.overlay = new Overlay(false);
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

  /**
   * Runs the queued commands as a {@link SharedStoreTransaction}: committed only if nothing watched
   * or read has changed, run again when something read has; the caller holds the locks.
   */
  private void runShared(
      Session s, List<byte[][]> queued, List<Session.Watch> watched, ByteBuf out) {
    checkWritable(queued);
    int mark = out.writerIndex();
    boolean committed;
    try {
      committed =
          shared.run(
              s,
              watched,
              out,
              () -> {
                Reply.arrayHeader(out, queued.size());
                Request each = new Request();
                for (byte[][] args : queued) {
                  each.reset(args);
                  commands.run(commands.named(each.string(0)), s, each, out);
                }
              });
    } catch (StoreIOException e) {
      out.writerIndex(mark);
      Reply.error(out, StoreHealth.misconf(health.failed(e)));
      return;
    } catch (StoreException | IllegalArgumentException | UnsupportedOperationException e) {
      out.writerIndex(mark);
      Reply.error(out, "ERR transaction not committed: " + e.getMessage());
      return;
    }
    if (!committed) {
      abortedReply(s, out);
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
