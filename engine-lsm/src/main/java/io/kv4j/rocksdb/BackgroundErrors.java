package io.kv4j.rocksdb;

import org.rocksdb.AbstractEventListener;
import org.rocksdb.BackgroundErrorReason;
import org.rocksdb.RocksDBException;
import org.rocksdb.Status;

/**
 * RocksDB's own background errors (a flush, a compaction, a write callback or a memtable that
 * failed on RocksDB's threads) as the store's health, through the failure policy of {@link
 * io.kv4j.spi.AbstractStore}: an error that stops RocksDB's writes puts the store into its failed
 * state ({@code FAILED}, every later write refused), one RocksDB retries by itself makes it {@code
 * DEGRADED} until RocksDB reports its recovery.
 *
 * <p>RocksJava hands the listener the error's reason and status but not the severity RocksDB gave
 * it, so {@link #stopsWrites} mirrors RocksDB's own table (its {@code ErrorHandler}): with {@code
 * paranoid_checks} on (the engine's default) every background error stops writes until the store is
 * reopened, except running out of space during a compaction, which is a soft error RocksDB recovers
 * from once space is freed; with {@code paranoid_checks} off RocksDB ignores corruption and I/O
 * errors in background work and goes on, so the store is {@code DEGRADED}. If that mirror is ever
 * wrong and RocksDB refuses a write while a background error the store took for soft stands, the
 * write path puts the store into its failed state ({@link #standing()}).
 *
 * <p>The callbacks run on RocksDB's threads (with the database mutex released): they never throw
 * and never wait for anything but the short lock of the failure state. An error reported before the
 * store object exists (a compaction scheduled by the open) is kept and handed to it by {@link
 * #attach}. One owner, {@link NativeOptions}, closes the listener once, after the database.
 */
final class BackgroundErrors extends AbstractEventListener {
  /** The task name under which the store reports soft errors (one at a time: RocksDB's too). */
  static final String TASK = "RocksDB background work";

  private final boolean paranoid;

  /** The store to report to; null until {@link #attach}. Guarded by this. */
  private RocksDbStore store;

  /** Errors reported before {@link #attach}: at most the first hard and the last soft one. */
  private String earlyHard;

  private String earlySoft;

  /** The background error RocksDB has not recovered from, or null. */
  private volatile String standing;

  BackgroundErrors(boolean paranoid) {
    super(
        EnabledEventCallback.ON_BACKGROUND_ERROR, EnabledEventCallback.ON_ERROR_RECOVERY_COMPLETED);
    this.paranoid = paranoid;
  }

  /** Starts reporting to {@code s}, handing it what was reported before. */
  void attach(RocksDbStore s) {
    String hard;
    String soft;
    synchronized (this) {
      store = s;
      hard = earlyHard;
      soft = earlySoft;
    }
    if (hard != null) {
      s.failWritesNow(hard, null);
    }
    if (soft != null && standing != null) {
      s.backgroundFailingNow(TASK, soft);
    }
  }

  /** The background error RocksDB has not recovered from (soft or hard), or null. */
  String standing() {
    return standing;
  }

  @Override
  public void onBackgroundError(BackgroundErrorReason reason, Status status) {
    try {
      String problem = describe(reason, status);
      standing = problem;
      boolean hard = stopsWrites(reason, status, paranoid);
      RocksDbStore s;
      synchronized (this) {
        s = store;
        if (s == null) {
          if (hard && earlyHard == null) {
            earlyHard = problem;
          } else if (!hard) {
            earlySoft = problem;
          }
          return;
        }
      }
      if (hard) {
        s.failWritesNow(problem, null);
      } else {
        s.backgroundFailingNow(TASK, problem);
      }
    } catch (Throwable e) { // NOPMD: nothing may escape into RocksDB's thread
      // A failure to report cannot be reported any better from here; the write path still sees
      // RocksDB's own refusal.
    }
  }

  @Override
  public void onErrorRecoveryCompleted(Status oldBackgroundError) {
    try {
      standing = null;
      RocksDbStore s;
      synchronized (this) {
        s = store;
        earlySoft = null;
      }
      if (s != null) {
        s.backgroundRecoveredNow(TASK); // a hard error stays: failed until reopened
      }
    } catch (Throwable e) { // NOPMD: nothing may escape into RocksDB's thread
      // As above.
    }
  }

  /**
   * What the store reports: the reason in words and RocksDB's status, e.g. "RocksDB background
   * compaction failed: Corruption: block checksum mismatch ... in 000012.sst".
   */
  static String describe(BackgroundErrorReason reason, Status status) {
    String what =
        reason == null
            ? "work"
            : switch (reason) {
              case FLUSH -> "flush";
              case COMPACTION -> "compaction";
              case WRITE_CALLBACK -> "write callback";
              case MEMTABLE -> "memtable";
            };
    String code = status == null ? "unknown status" : status.getCodeString();
    String state = status == null ? null : status.getState();
    return "RocksDB background "
        + what
        + " failed: "
        + code
        + (state == null || state.isEmpty() ? "" : ": " + state);
  }

  /**
   * Whether RocksDB stops writes after this error (severity hard, fatal or unrecoverable in its
   * {@code ErrorHandler}), rather than retrying (soft) or ignoring it.
   */
  static boolean stopsWrites(BackgroundErrorReason reason, Status status, boolean paranoid) {
    if (!paranoid) {
      return false; // RocksDB's kNoError for corruption and I/O errors without paranoid_checks
    }
    Status.Code code = status == null ? null : status.getCode();
    Status.SubCode sub = status == null ? null : status.getSubCode();
    return !(reason == BackgroundErrorReason.COMPACTION
        && code == Status.Code.IOError
        && sub == Status.SubCode.NoSpace);
  }

  /** A write refused by RocksDB while a background error stands, as the failure it is. */
  static String refusedWrite(String standing, RocksDBException e) {
    return standing + "; RocksDB refuses writes: " + e.getMessage();
  }
}
