package io.kv4j.server;

import io.kv4j.Cursor;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreIOException;
import io.kv4j.WriteBatch;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.locks.ReentrantLock;

/**
 * FLUSHALL and FLUSHDB. Synchronous: deletes every key in batches of 1000 holding every stripe
 * lock. ASYNC: returns at once; from then on every key that existed is hidden from reads, scans and
 * DBSIZE ({@link AsyncFlush}), and a background thread deletes them, each under its stripe lock,
 * skipping keys written after the command (they stay). FLUSHDB in a database n > 0 deletes the keys
 * of its keyspace synchronously (also when ASYNC); FLUSHALL flushes every other database
 * synchronously and database 0 as above.
 */
final class FlushCommands {
  private static final int FLUSH_BATCH = 1000;

  private final Dataset data;
  private final StoreHealth health;
  private final ExecutorService flusher;

  FlushCommands(Dataset data, StoreHealth health) {
    this.data = data;
    this.health = health;
    this.flusher =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "kv4j-flushall-async");
              t.setDaemon(true);
              return t;
            });
  }

  void flush(Session s, Request r, ByteBuf out) {
    if (r.count() > 2 || (r.count() == 2 && !r.is(1, "SYNC") && !r.is(1, "ASYNC"))) {
      throw CommandException.syntax();
    }
    boolean async = r.count() == 2 && r.is(1, "ASYNC");
    boolean all = r.is(0, "FLUSHALL");
    int[] held = data.locks.lockEverything();
    try {
      if (s.db != 0 && !all) {
        data.versions.bumpAll();
        flushNow(data.database(s.db));
        Reply.ok(out);
        return;
      }
      if (all && data.keyspaces) {
        for (int db : data.existingDatabases()) {
          flushNow(data.database(db));
        }
      }
      AsyncFlush running = data.flushing();
      if (running != null) {
        running.cancelled = true;
      }
      data.versions.bumpAll();
      if (async) {
        AsyncFlush f = new AsyncFlush();
        data.flushing(f);
        flusher.execute(() -> flushInBackground(f));
      } else {
        data.flushing(null);
        flushNow(data.store());
      }
    } finally {
      data.locks.unlockAll(held);
    }
    Reply.ok(out);
  }

  private void flushNow(Store target) {
    byte[] after = null;
    while (true) {
      List<byte[]> keys = new ArrayList<>(FLUSH_BATCH);
      // An ordered store's next batch starts after the last key deleted: every key before it is
      // gone (all stripes are held). A scan from the start would walk past the keys already
      // deleted, which an engine's ordered view may still list until it next rebuilds (hashlog's
      // does): quadratic in the number of keys.
      try (Cursor c = target.scan(keysAfter(after).limit(FLUSH_BATCH))) {
        while (c.hasNext()) {
          keys.add(c.next().key());
        }
      }
      if (keys.isEmpty()) {
        break;
      }
      after = keys.get(keys.size() - 1);
      if (data.atomicBatch) {
        WriteBatch b = new WriteBatch();
        keys.forEach(b::delete);
        target.write(b);
      } else {
        keys.forEach(target::delete);
      }
    }
  }

  /**
   * The keys after {@code last} on an ordered store (every key before it is deleted or skipped);
   * all keys on an unordered one, or when {@code last} is null.
   */
  private KeyRange keysAfter(byte[] last) {
    return last != null && data.ordered ? KeyRange.all().gt(last) : KeyRange.all();
  }

  private void flushInBackground(AsyncFlush f) {
    try {
      byte[] after = null;
      while (!f.cancelled) {
        List<byte[]> batch = new ArrayList<>(FLUSH_BATCH);
        try (Cursor c = data.store().scan(keysAfter(after))) {
          while (c.hasNext() && batch.size() < FLUSH_BATCH) {
            byte[] k = c.next().key();
            if (f.hides(k)) {
              batch.add(k);
            }
            after = k;
          }
        }
        if (batch.isEmpty()) {
          break;
        }
        if (!deleteHidden(f, batch)) {
          return;
        }
      }
      finished(f);
    } catch (StoreIOException e) {
      health.failed(e); // old keys stay hidden; a later FLUSHALL deletes them
    } catch (RuntimeException e) {
      StderrLog.print("kv4j-server: FLUSHALL ASYNC stopped, old keys stay hidden: " + e);
    }
  }

  /** Deletes the keys {@code f} still hides, each under its lock; false when {@code f} stopped. */
  private boolean deleteHidden(AsyncFlush f, List<byte[]> batch) {
    for (byte[] k : batch) {
      if (f.cancelled) {
        return false;
      }
      ReentrantLock l = data.locks.lockFor(k);
      try {
        if (f.hides(k)) {
          data.store().delete(k);
        }
      } finally {
        l.unlock();
      }
    }
    return true;
  }

  private void finished(AsyncFlush f) {
    if (f.cancelled) {
      return;
    }
    int[] held = data.locks.lockEverything();
    try {
      if (data.flushing() == f) {
        data.flushing(null);
      }
    } finally {
      data.locks.unlockAll(held);
    }
  }

  /** Stops a running background delete (its old keys stay until the next FLUSHALL). */
  void close() {
    AsyncFlush f = data.flushing();
    if (f != null) {
      f.cancelled = true;
    }
    flusher.shutdownNow();
  }
}
