package io.kv4j.server;

import io.kv4j.Store;
import io.kv4j.WriteBatch;
import io.netty.buffer.ByteBuf;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * A transaction on a store other servers (or applications) also write, where the engine declares
 * CONDITIONAL_BATCH ({@link Dataset#shared}). This server's stripe locks cannot keep those writers
 * out, so the transaction is optimistic: its commands run against an {@link Overlay} that records
 * every value read from the store, then the overlay's writes are committed with {@link
 * Store#writeIf} on the conditions that every watched key still holds its WATCH-time value and
 * every key read still holds the value read. When the engine refuses the commit: if a watched key's
 * value differs from its WATCH-time value the transaction is aborted (EXEC's nil, as Redis
 * answers); otherwise another writer changed a key the transaction only read, and it runs again
 * from the start, its partial reply discarded, up to {@link #MAX_ATTEMPTS} times.
 */
final class SharedStoreTransaction {
  /** Runs before giving up with an error; each loses only to a commit of another writer. */
  static final int MAX_ATTEMPTS = 100;

  /** What the transaction does: writes its reply, reads and writes through {@link Dataset}. */
  @FunctionalInterface
  interface Body {
    void run();
  }

  private final Dataset data;
  private final BooleanSupplier writable;
  private final LongAdder reruns = new LongAdder();

  /**
   * @param writable whether the store takes writes now (not read-only, not failed): a transaction
   *     that only reads is checked by {@code writeIf} only then
   */
  SharedStoreTransaction(Dataset data, BooleanSupplier writable) {
    this.data = data;
    this.writable = writable;
  }

  /**
   * Runs {@code body} until it commits or a watched key has changed. The caller holds the stripe
   * locks of the keys involved (so this server's own clients do not make it run again).
   *
   * @param watched the session's watches, or null
   * @return true when committed, false when a watched key changed (nothing was written and nothing
   *     of the reply is left in {@code out})
   * @throws CommandException when it did not commit in {@link #MAX_ATTEMPTS} runs
   */
  boolean run(Session s, List<Session.Watch> watched, ByteBuf out, Body body) {
    int mark = out.writerIndex();
    Session.Settings settings = s.settings();
    for (int attempt = 1; ; attempt++) {
      Overlay o = new Overlay(true);
      s.overlay = o;
      try {
        body.run();
      } finally {
        s.overlay = null;
      }
      if (commitIf(s, o, watched)) {
        return true;
      }
      out.writerIndex(mark);
      if (watchedChanged(watched)) {
        return false;
      }
      if (attempt == MAX_ATTEMPTS) {
        throw new CommandException(
            "ERR transaction not committed after "
                + MAX_ATTEMPTS
                + " attempts: each time another writer of the shared store changed a key it read;"
                + " nothing was written");
      }
      reruns.increment();
      s.restore(settings);
      pause(attempt);
    }
  }

  /** Transactions run again because another writer changed a key they read (INFO kv4j). */
  long reruns() {
    return reruns.sum();
  }

  /** Commits the overlay if nothing watched or read has changed; false when refused. */
  private boolean commitIf(Session s, Overlay o, List<Session.Watch> watched) {
    WriteBatch b = new WriteBatch();
    if (watched != null) {
      for (Session.Watch w : watched) {
        if (w.db() == s.db) {
          expect(b, null, w.key(), w.value());
        } else if (data.keyspaceBatch) {
          expect(b, w.db() == 0 ? Store.DEFAULT_KEYSPACE : "db" + w.db(), w.key(), w.value());
        } else if (!Arrays.equals(data.database(w.db()).get(w.key()), w.value())) {
          // A watch in another database with no batch across keyspaces: checked just before.
          return false;
        }
      }
    }
    o.reads.forEach((k, v) -> expect(b, null, k.bytes, v == Overlay.ABSENT ? null : v));
    o.writes.forEach(
        (k, v) -> {
          if (v == Overlay.DELETED) {
            b.delete(k.bytes);
          } else {
            b.put(k.bytes, v);
          }
        });
    if (b.size() == 0 && !b.hasConditions()) {
      return true;
    }
    if (b.size() == 0 && !writable.getAsBoolean()) {
      // Only reads, on a store that refuses writeIf (read-only, or failed: reads go on there).
      return holds(s, b);
    }
    if (!data.of(s).writeIf(b)) {
      return false;
    }
    for (Key k : o.writes.keySet()) {
      data.touched(s, k.bytes);
    }
    return true;
  }

  private static void expect(WriteBatch b, String keyspace, byte[] key, byte[] value) {
    if (keyspace == null) {
      if (value == null) {
        b.expectAbsent(key);
      } else {
        b.expect(key, value);
      }
    } else if (value == null) {
      b.expectAbsent(keyspace, key);
    } else {
      b.expect(keyspace, key, value);
    }
  }

  /** Whether the conditions hold now, read one by one (not atomic: for a store without writes). */
  private boolean holds(Session s, WriteBatch b) {
    for (int i = 0; i < b.conditionCount(); i++) {
      String name = b.conditionKeyspace(i);
      Store st =
          name == null
              ? data.of(s)
              : data.database(name.equals(Store.DEFAULT_KEYSPACE) ? 0 : dbNumber(name));
      if (!Arrays.equals(st.get(b.conditionKey(i)), b.conditionValue(i))) {
        return false;
      }
    }
    return true;
  }

  private static int dbNumber(String keyspace) {
    return Integer.parseInt(keyspace.substring(2)); // "db<n>", named by commitIf
  }

  /** Whether a watched key's stored value now differs from its value at WATCH time. */
  private boolean watchedChanged(List<Session.Watch> watched) {
    if (watched == null) {
      return false;
    }
    for (Session.Watch w : watched) {
      if (!Arrays.equals(data.database(w.db()).get(w.key()), w.value())) {
        return true;
      }
    }
    return false;
  }

  /**
   * Backs off with jitter before running again, so two servers retrying against each other stop
   * colliding; short, since each refusal means another writer's commit went through.
   */
  private static void pause(int attempt) {
    if (attempt < 3) {
      Thread.onSpinWait();
      return;
    }
    long maxNanos = Math.min(attempt, 20) * 50_000L;
    LockSupport.parkNanos(ThreadLocalRandom.current().nextLong(1, maxNanos));
  }
}
