package io.kv4j.server;

import io.kv4j.Store;
import io.kv4j.StoreIOException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The served store's health. A write that fails with {@link StoreIOException} (disk full, EIO)
 * marks the store failed: later writes are refused with {@code -MISCONF} before they reach the
 * engine, reads go on, and {@code INFO} shows {@code store_state:failed} with the reason. Every
 * {@code --reopen-interval} seconds the server closes and reopens the store (the engine's recovery
 * decides what is on disk); a reopen that fails is retried and its error shown in INFO. A store
 * opened read-only answers writes with {@code -READONLY}.
 */
final class StoreHealth {
  private final Dataset data;
  private final Supplier<Store> reopener;
  private final int reopenIntervalSeconds;
  private final ScheduledExecutorService scheduler;
  private final AtomicLong reopens = new AtomicLong();
  private final AtomicLong writeFailures = new AtomicLong();

  // The first write failure since the store was (re)opened, or null.
  private volatile String writeFailure;
  private volatile boolean reopening;
  private volatile String lastReopenError;

  StoreHealth(Dataset data, Supplier<Store> reopener, int reopenIntervalSeconds) {
    this.data = data;
    this.reopener = reopener;
    this.reopenIntervalSeconds = reopenIntervalSeconds;
    this.scheduler =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "kv4j-store-reopen");
              t.setDaemon(true);
              return t;
            });
  }

  /** Refuses a write command before it reaches the engine when the store cannot take it. */
  void checkWritable() {
    if (data.info.readOnly()) {
      throw new CommandException("READONLY You can't write against a read only kv4j store");
    }
    String f = writeFailure;
    if (f != null) {
      throw new CommandException(misconf(f));
    }
    if (reopening) {
      throw new CommandException("LOADING kv4j store is being reopened after a write failure");
    }
  }

  /** Whether writes reach the store now (not read-only, not failed, not being reopened). */
  boolean writable() {
    return !data.info.readOnly() && writeFailure == null && !reopening;
  }

  static String misconf(String failure) {
    return "MISCONF kv4j store failed a write and refuses writes until it is reopened ("
        + failure
        + "). Commands that may modify the data set are disabled; see INFO kv4j.";
  }

  /**
   * Records a write failure (the first since the last reopen) and schedules a reopen; returns the
   * failure writes are refused with.
   */
  String failed(StoreIOException e) {
    String m = String.valueOf(e.getMessage());
    synchronized (this) {
      if (writeFailure == null) {
        writeFailure = m;
        writeFailures.incrementAndGet();
        StderrLog.print("kv4j-server: store write failed, writes refused: " + m);
        scheduleReopen();
      }
      return writeFailure;
    }
  }

  private void scheduleReopen() {
    if (reopener == null || reopenIntervalSeconds == 0) {
      return;
    }
    try {
      scheduler.schedule(this::reopen, reopenIntervalSeconds, TimeUnit.SECONDS);
    } catch (RuntimeException e) {
      // Shut down: the server is closing.
    }
  }

  /**
   * Closes the failed store and opens it again; the engine's recovery decides what is on disk.
   * Commands that reach the store meanwhile get {@code -LOADING}.
   */
  void reopen() {
    synchronized (this) {
      reopening = true;
    }
    try {
      try {
        data.store().close();
      } catch (RuntimeException e) {
        StderrLog.print("kv4j-server: closing the failed store: " + e);
      }
      Store fresh = reopener.get();
      data.replace(fresh);
      synchronized (this) {
        writeFailure = null;
        lastReopenError = null;
        reopening = false;
      }
      reopens.incrementAndGet();
      StderrLog.print("kv4j-server: store reopened: " + fresh.info().describe());
    } catch (Throwable t) {
      lastReopenError = String.valueOf(t);
      StderrLog.print("kv4j-server: reopening the store failed, retrying: " + t);
      scheduleReopen();
    }
  }

  boolean reopening() {
    return reopening;
  }

  /** {@code ok}, {@code failed}, {@code reopening} or {@code read-only}, for INFO. */
  String state() {
    if (data.info.readOnly()) {
      return "read-only";
    }
    if (reopening) {
      return "reopening";
    }
    return writeFailure != null ? "failed" : "ok";
  }

  /** The write failure writes are refused for, or null. */
  String writeFailure() {
    return writeFailure;
  }

  String lastReopenError() {
    return lastReopenError;
  }

  long reopens() {
    return reopens.get();
  }

  long writeFailures() {
    return writeFailures.get();
  }

  /** Seconds between reopen attempts, 0 when the server never reopens the store. */
  int reopenIntervalSeconds() {
    return reopener == null ? 0 : reopenIntervalSeconds;
  }

  void close() {
    scheduler.shutdownNow();
  }
}
