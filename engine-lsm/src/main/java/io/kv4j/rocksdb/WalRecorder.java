package io.kv4j.rocksdb;

import io.kv4j.StoreClosedException;
import io.kv4j.StoreIOException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.rocksdb.RocksDBException;

/**
 * Writes the {@link SyncedWals} record of a read-write store from a background thread, at most once
 * every {@link #INTERVAL_NANOS}; nothing is added to a write or to {@code sync()} but one flag. A
 * round runs when the store's last sequence number moved since the last record and, with {@code
 * BUFFERED}, only if {@code sync()} was called since ({@link #synced()}): it reads the sizes of the
 * WAL files, then calls {@code FlushWAL(true)}, which makes those bytes durable (with {@code SYNC}
 * a write group may have written without having synced yet), then writes the record. So with {@code
 * SYNC} the record trails the acknowledged writes by at most about a second; with {@code BUFFERED}
 * it covers the WAL up to about a second after the last {@code sync()}, and writes never synced are
 * not in it (it syncs nothing the user did not ask to sync, beyond those).
 *
 * <p>A record that cannot be written (disk full) makes the store {@code DEGRADED} until one can; a
 * WAL sync that fails is the store's write failure (failed until reopened), as for {@code sync()}.
 */
final class WalRecorder {
  /** How often, at most, the record is written. */
  static final long INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

  static final String TASK = "recording synced WAL sizes";

  private final RocksDbStore store;
  private final boolean syncWrites;
  private final Path walDir;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition wake = lock.newCondition();

  /** Guarded by {@link #lock}. */
  private boolean stopped;

  /**
   * Whether {@code sync()} was called since the last round ({@code BUFFERED} records only then).
   */
  private final AtomicBoolean syncCalled = new AtomicBoolean();

  /** Used by one round at a time (the thread, or a test calling {@link #recordNow()}). */
  private final ReentrantLock round = new ReentrantLock();

  private long seenSequence = -1;
  private Map<String, Long> written;
  private boolean failing;
  private Thread thread;

  WalRecorder(RocksDbStore store, boolean syncWrites, Path walDir) {
    this.store = store;
    this.syncWrites = syncWrites;
    this.walDir = walDir;
  }

  /** Starts the background thread. */
  void start() {
    thread = store.background("kv4j-rocksdb-synced-wals " + store.dir, this::run);
  }

  /** {@code sync()} returned: the next round records the WAL as it is then. */
  void synced() {
    syncCalled.set(true);
  }

  /** Stops the thread and waits for it, so that no round runs once this returns. */
  void stop() {
    lock.lock();
    try {
      stopped = true;
      wake.signalAll();
    } finally {
      lock.unlock();
    }
    Thread t = thread;
    if (t != null && t != Thread.currentThread()) {
      boolean interrupted = false;
      while (true) {
        try {
          t.join();
          break;
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private void run() {
    while (awaitRound()) {
      try {
        recordNow();
        if (failing) {
          failing = false;
          store.backgroundRecoveredNow(TASK);
        }
      } catch (StoreClosedException e) {
        return;
      } catch (IOException e) {
        failing = true;
        store.backgroundFailingNow(TASK, e);
      } catch (StoreIOException e) {
        if (store.writeFailureNow() != null) {
          return; // the WAL sync failed: the store is failed until reopened
        }
        failing = true;
        store.backgroundFailingNow(TASK, e);
      }
    }
  }

  /** Waits one interval; false once stopped. */
  private boolean awaitRound() {
    lock.lock();
    try {
      long left = INTERVAL_NANOS;
      while (!stopped && left > 0) {
        try {
          left = wake.awaitNanos(left);
        } catch (InterruptedException e) {
          return false;
        }
      }
      return !stopped;
    } finally {
      lock.unlock();
    }
  }

  /**
   * One round: writes the record if there is something new to record.
   *
   * @return whether it wrote the record
   * @throws IOException if the record cannot be written
   * @throws StoreClosedException once the store is closed
   */
  boolean recordNow() throws IOException {
    round.lock();
    try {
      boolean wanted = syncWrites || syncCalled.getAndSet(false);
      long seq = wanted ? lastSequence() : seenSequence;
      if (seq == seenSequence) {
        return false;
      }
      Map<String, Long> record = SyncedWals.sizes(walDir);
      flushWal(); // the sizes just read are on disk once it returns
      if (written != null) {
        for (Map.Entry<String, Long> e : written.entrySet()) {
          record.merge(e.getKey(), e.getValue(), Math::max);
        }
      }
      record.keySet().removeIf(n -> !Files.exists(walDir.resolve(n))); // deleted after a flush
      try {
        SyncedWals.write(store.dir, record);
      } catch (IOException e) {
        if (!syncWrites) {
          syncCalled.set(true); // the next round tries again
        }
        throw e;
      }
      seenSequence = seq;
      written = record;
      return true;
    } finally {
      round.unlock();
    }
  }

  private long lastSequence() {
    int l = store.enter();
    try {
      return store.db.getLatestSequenceNumber();
    } finally {
      store.gate.exit(l);
    }
  }

  private void flushWal() {
    int l = store.enter();
    try {
      store.db.flushWal(true);
    } catch (RocksDBException e) {
      throw store.writeError("sync of the WAL for " + SyncedWals.FILE_NAME, e);
    } finally {
      store.gate.exit(l);
    }
  }
}
