package io.kv4j.tck.ref;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The deliberate bugs of the {@code ref} engine, each meant to be caught by one TCK rule. */
public enum Defect {
  /** A correct engine. */
  NONE,
  /** Keys compare as signed bytes. */
  SIGNED_ORDER,
  /** A batch applies operations until one fails, leaving the earlier ones applied. */
  NON_ATOMIC_BATCH,
  /** Deletes are not logged, so deleted keys come back after reopen. */
  LOST_DELETES,
  /** An exclusive lower bound is treated as inclusive. */
  EXCLUSIVE_AS_INCLUSIVE,
  /** Reverse scans skip the highest key in range. */
  REVERSE_OFF_BY_ONE,
  /** An empty value reads back as null. */
  EMPTY_VALUE_AS_NULL,
  /** Closing the store leaves its cursors working. */
  CURSOR_OUTLIVES_STORE,
  /** Writes are acknowledged while still in a Java buffer, flushed only on close. */
  ACK_BEFORE_DURABLE,
  /** Concurrent writers overwrite each other's copy of the map. */
  LOST_CONCURRENT_WRITES,
  /** The range limit is ignored. */
  LIMIT_IGNORED,
  /** No directory lock: a second open succeeds. */
  NO_LOCK,
  /** Cursors read the live map while declaring SNAPSHOT_SCAN. */
  FAKE_SNAPSHOT,
  /** get returns the stored array itself. */
  ALIASED_VALUES,
  /**
   * Compaction rewrites the log without the entries whose value is empty, mistaking them for
   * deletions: they are still served until the store is reopened, then gone.
   */
  COMPACT_DROPS_EMPTY_VALUES,
  /**
   * An overwrite removes the old value from the log at once and writes the new one only on close,
   * like an engine overwriting in place whose new bytes are not whole yet: a crash loses every key
   * overwritten since the store opened, though every put was acknowledged. New keys are logged
   * normally, so only the overwrite rule (7.5) sees it.
   */
  TORN_OVERWRITE,
  /**
   * A missing or empty log is taken for a new store (the layout lists no required file), so a
   * deleted or emptied log opens as an empty store: every key silently gone.
   */
  MISSING_LOG_AS_NEW_STORE,
  /**
   * The clean-close length in the header is ignored: a log cut short after a clean close is taken
   * for a torn tail, truncated to its last whole record, and opened without the keys after it.
   */
  SHORT_LOG_AS_TORN_TAIL,
  /**
   * A log shorter than its clean-close length kills the JVM (exit 134), as a read past the end of a
   * mapped file does with SIGBUS.
   */
  CRASH_ON_SHORT_LOG,
  /** Record checksums are never checked at open, while the engine declares CHECKSUMS. */
  NO_CHECKSUM_CHECK,
  /**
   * Damage found at open is reported, but only after the log was truncated to its last good record:
   * the failed open destroyed the records a repair could have saved.
   */
  SHRINKS_ON_FAILED_OPEN,
  /**
   * {@code verify()} checks nothing: it only checks that the store is open. A damaged log is found
   * at the next open, never while the store is open (12.7).
   */
  VERIFY_DOES_NOTHING,
  /**
   * A last record that fails its checksum is taken for a torn write and dropped, even after a clean
   * close (the log's length is the clean-close length, so nothing was torn): the batch it held is
   * silently lost at open (12.8).
   */
  LAST_RECORD_AS_TORN_TAIL,
  /** Damage found at open is reported as IllegalStateException, not StoreCorruptedException. */
  DAMAGE_AS_ILLEGAL_STATE,
  /** Damage found at open makes the open wait forever. */
  HANG_ON_DAMAGE,
  /**
   * The directory is opened without its identity (lock only, a missing log is a new store), so
   * another engine's store is taken for an empty ref store and a log is created beside its files.
   */
  IGNORES_IDENTITY,
  /**
   * After 100 writes every write waits forever (outside the store's lock, until interrupted), as in
   * an engine that deadlocked.
   */
  STALLED_WRITES,
  /** A second hasNext() without next() in between steps over an entry (4.9). */
  HASNEXT_ADVANCES,
  /** A batch's own key and value arrays are kept in the index, not copied (5.7). */
  RETAINS_BATCH_ARRAYS,
  /** forEach closes its cursor only when the action returns normally (4.10). */
  FOREACH_LEAKS_CURSOR,
  /** A snapshot cursor takes its snapshot at its first hasNext(), not when scan() returns (4.5). */
  LAZY_SNAPSHOT,
  /** The directory lock is a set in this JVM: a second open here fails, another process opens. */
  JVM_LOCAL_LOCK,
  /** The exact key count is a plain field updated outside the write lock (8.5). */
  RACY_KEY_COUNT,
  /** A batch is logged whole but applied to the index key by key, unlocked in between (8.6). */
  HALF_VISIBLE_BATCH,
  /** The log append and the index update take different locks (8.7). */
  SPLIT_LOCKS,
  /** compact() copies the index, then writes the new log outside the write lock (10.12). */
  COMPACT_OUTSIDE_LOCK,
  /**
   * SYNC never syncs: acknowledged writes sit in the page cache, which survives a process kill, so
   * only a trace of the sync calls (7.6) sees it.
   */
  NEVER_SYNCS,
  /**
   * A conditional write compares outside the write lock, then writes: two threads can both see the
   * old value and both "win" (13.2, 13.3).
   */
  RACY_CONDITIONAL_WRITE,
  /** putIfAbsent writes whether or not the key is present, and says it stored the value (13.1). */
  PUT_IF_ABSENT_OVERWRITES,
  /** A snapshot reads the live store: later writes show through it (14.1, 14.2). */
  LIVE_SNAPSHOT,
  /** getAll returns the values in key order, not in the order of the keys asked for (15.1). */
  GETALL_IN_KEY_ORDER,
  /**
   * A backup copies the log only up to its length at the last sync (or at open), so acknowledged
   * BUFFERED writes since then are missing from the copy (16.1, 16.2).
   */
  BACKUP_FROM_LAST_SYNC,
  /**
   * After 100 writes, a write takes the store's monitor and waits for a lock never released, deaf
   * to interrupts: every later write and close() block on the monitor, as in a lock-order deadlock
   * (8.1's thread limit, 1.9's rule limit; the kit must fail the rule, never hang the build).
   */
  DEADLOCKED_WRITES,
  /**
   * A batch's puts are logged at once, its deletes only at close: a crash leaves every batch since
   * the open half applied (7.3).
   */
  HALF_DURABLE_BATCH,
  /**
   * A batch is logged as one record per operation, each appended (and with SYNC synced) on its own:
   * a kill between two of them leaves half a batch (7.3, whose kill is timed to land inside a large
   * batch).
   */
  BATCH_AS_RECORDS,
  /**
   * A batch spanning keyspaces is logged as one record per keyspace, each appended on its own: a
   * kill between two of them leaves the batch applied in some keyspaces only (7.7).
   */
  KEYSPACE_PARTS_LOGGED_APART,
  /**
   * A put of a value over 8 MiB halts the JVM (exit 71), as a native allocator's abort would: the
   * kit's report must still name the rule that was running (9.2, run in a child JVM).
   */
  HALTS_ON_HUGE_VALUE,
  /**
   * The index, a plain {@code TreeMap}, is changed outside the write lock: the log append is
   * locked, the {@code put}/{@code remove} on the map is not, so concurrent writers of different
   * keys race inside the tree and lose entries or break its order (8.8).
   */
  UNLOCKED_INDEX,
  /**
   * Every keyspace handle reads and writes the store's own keys: the names are listed, but the
   * keyspaces are not apart (17.1).
   */
  SHARED_KEYSPACE_KEYS,
  /**
   * A drop forgets the keyspace's name but leaves its keys (and logs nothing): they reappear when
   * the name is opened again, and the name and keys come back after reopen (17.3).
   */
  DROP_KEEPS_KEYS,
  /**
   * A batch spanning keyspaces is split by keyspace, each part checked and applied before the next
   * is looked at: a bad value in a later keyspace leaves the earlier ones applied (17.6).
   */
  KEYSPACE_BY_KEYSPACE_BATCH,
  /**
   * A backup copies the store's own keys, then each keyspace in turn, taking the store's lock for
   * each copy only: batches spanning keyspaces written in between are in some keyspaces of the copy
   * and not others (16.5).
   */
  BACKUP_KEYSPACES_ONE_BY_ONE,
  /** A backup holds the store's own keys only, no keyspace (17.9). */
  BACKUP_WITHOUT_KEYSPACES,
  /**
   * Compaction rewrites the log with the store's own keys only: the keyspaces are served until the
   * store is reopened, then gone, names and keys (17.2, which compacts before its reopen).
   */
  COMPACT_FORGETS_KEYSPACES,
  /**
   * The 20th write (put, delete or batch) of an opened store fails with {@code StoreIOException},
   * as on a full disk, with nothing wrong in the environment: the failure of the rule that met it
   * must name the seed or thread and the operation's index.
   */
  WRITE_FAILS,
  /** {@code writeIf} writes the batch without looking at its conditions (18.2). */
  IGNORED_CONDITIONS,
  /**
   * {@code writeIf} checks the conditions under the lock, releases it, then writes: another writer
   * passes in between, so optimistic transactions lose updates (18.4).
   */
  RACY_CONDITIONAL_BATCH,
  /** Conditions read the store as if the batch's own operations were applied (18.3). */
  CONDITIONS_SEE_OWN_WRITES,
  /** Every condition reads the store's own keys, whatever keyspace it names (18.6). */
  CONDITIONS_IGNORE_KEYSPACE,
  /**
   * {@code getAll} answers from the map, which outlives {@code close()}, without checking that the
   * store is open: a closed store keeps serving multi-gets (10.2).
   */
  GETALL_AFTER_CLOSE,
  /**
   * {@code verify()} does not check that the store is open and reads the closed log: after close it
   * throws {@code StoreIOException} (a closed channel), not {@code StoreClosedException} (10.2).
   */
  VERIFY_AFTER_CLOSE_IS_IO_ERROR,
  /**
   * {@code getAll} remembers the keys it found absent and answers null for them from then on,
   * without looking: a key written after an earlier {@code getAll} missed it stays missing (15.2).
   */
  GETALL_CACHES_ABSENT,
  /**
   * {@code getAll} reads each distinct key once and hands the same array to every position that
   * asked for it, as a native multi-get that de-duplicates its keys might: changing the array
   * returned for one position changes the other (15.2).
   */
  GETALL_SHARES_DUPLICATES,
  /**
   * {@code getAll} returns a lazy view over the caller's key list, reading each value when the
   * caller reads its position: it keeps the list, sees writes made after it returned, and answers
   * for other keys when the caller changes the list or its arrays (15.2).
   */
  GETALL_LAZY_VIEW,
  /**
   * Keyspace names are folded to lower case, as a table or file name on a case-insensitive system
   * would be: {@code Users} and {@code users} are one keyspace (17.11).
   */
  KEYSPACE_NAMES_IGNORE_CASE,
  /**
   * Creating a keyspace logs nothing: a keyspace exists in the log only through its keys' records,
   * so one created and never written is listed until the store closes, then gone (17.12).
   */
  EMPTY_KEYSPACE_NOT_LOGGED,
  /**
   * {@code replace} and {@code delete(key, expected)} compare the expected array by identity
   * ({@code ==}), not by content, so they answer false for any present key: a retry loop never
   * succeeds (13.2 must fail fast, not spin until the rule's time limit).
   */
  REPLACE_COMPARED_BY_IDENTITY,
  /**
   * {@code writeIf} compares a condition's expected value by identity, not by content, so a
   * condition on a present key never holds and {@code writeIf} answers false: optimistic
   * transactions retry forever (18.4 must fail fast, not spin until the rule's time limit).
   */
  CONDITIONS_COMPARED_BY_IDENTITY,
  /**
   * A conditional write is a {@code get}, a comparison and a {@code put} (or {@code delete}), each
   * call taking the store's lock on its own, as a default written over the public API would be,
   * with nothing deliberately in between (a window of some hundred nanoseconds): two writers of one
   * key can both see the value they expect and both "win" (13.2, which must catch it in every run).
   */
  SPLIT_COMPARE_AND_SET,
  /**
   * A snapshot copies the map without the store's lock, while a writer may be applying a batch to
   * it: the copy can hold half a batch (14.2, which must catch it in every run).
   */
  UNLOCKED_SNAPSHOT,
  /**
   * {@code verify()} reads the log without the store's lock and compares the end of its records
   * with the file's length read afterwards: a write made during the check is reported as a damaged
   * tail, {@code StoreCorruptedException} on a healthy store (10.13).
   */
  VERIFY_SEES_WRITES_AS_DAMAGE,
  /**
   * A put is applied and acknowledged, and lands once more at its thread's next call, as a
   * write-behind queue resending its last entry would: a put another thread made to the key in
   * between, acknowledged, is silently overwritten by this earlier value. One thread alone never
   * sees it (its own later calls come after the replay), so only a history of several threads shows
   * the lost update (19.1, which must catch it in every run).
   */
  REPLAYED_PUT,
  /**
   * {@code get} answers from a cache of the values it read; a write drops its keys from the cache
   * some 20 microseconds before it takes the store's lock (as a write whose slow path comes after
   * the drop would), so a reader passing in between caches the old value, and serves it after the
   * write completed, until the key is written again: a stale read (19.1, which must catch it in
   * every run). One thread alone never sees it.
   */
  STALE_READ_CACHE,
  /**
   * {@code verify()} of a store opened read-only reports a log nobody closed cleanly as damaged:
   * every crash image, which a read-write open recovers (its unfinished tail is no damage), is
   * reported as {@code StoreCorruptedException} (10.14, which must catch it in every run).
   */
  CRASH_IMAGE_AS_DAMAGE,
  /**
   * The background flusher (BUFFERED) swallows its failure: the thread ends, nobody is told, and
   * {@code stats().health()} stays OK while nothing is flushed any more (10.15, which must catch it
   * in every run).
   */
  SILENT_BACKGROUND_FAILURE,
  /**
   * A log whose header is garbage (bad magic or a header checksum that fails) is taken for a log
   * that was being created when a crash came, and started afresh as an empty store: the identity
   * file is intact, so {@code StoreDirectory} opens the directory, and the data is silently gone
   * (10.7, whose second case keeps the identity file and overwrites only the data files).
   */
  GARBAGE_LOG_AS_NEW_STORE,
  /**
   * The clean-close marker (the header's clean length) is left as it was when a cleanly closed log
   * is reopened for writing: after more writes and a crash, the log is longer than the marker says
   * and the next open reports damage where there is none (7.8, a crash after a clean close).
   */
  CLEAN_MARKER_KEPT_ON_REOPEN,
  /**
   * The exact key count is kept apart from the map: each put is counted as a new key before the
   * write takes the lock and corrected after it, so the count is right whenever no write is in
   * flight and too high while overwrites run (8.5, which reads it while writers run).
   */
  TRANSIENT_KEY_COUNT,
  /**
   * A keyspace handle closed while its store is open refuses {@code get} only: its writes,
   * conditional writes, scans, snapshots, stats, sync and verify go on acting on the keyspace
   * (17.5, which calls every method of the closed handle; found by mutation-testing the kit).
   */
  CLOSED_HANDLE_REFUSES_ONLY_GET,
  /**
   * A keyspace handle's {@code putIfAbsent}, {@code replace}, {@code delete(key, expected)} and
   * {@code writeIf} pass the call on and answer true whatever the store answered: they act right,
   * and say they acted when they did not (17.13; found by mutation-testing the kit).
   */
  HANDLE_CONDITIONAL_ANSWERS_TRUE,
  /**
   * A keyspace handle's {@code verify()} checks only that the handle is open and reads nothing: a
   * damaged file of its keyspace is not reported through it (17.14).
   */
  HANDLE_VERIFY_DOES_NOTHING,
  /**
   * A keyspace handle's {@code sync()} checks only that the handle is open and forces nothing: with
   * BUFFERED, writes synced through a handle are not durable against a power loss (7.9, which sees
   * it in an strace of a child JVM; a kill alone cannot, the page cache survives it).
   */
  HANDLE_SYNC_SYNCS_NOTHING,
  /**
   * {@code close()} frees the index first and marks the store closed last, after flushing and
   * closing the log: a call that arrives meanwhile passes the open check and reads the freed index
   * ({@code NullPointerException}, an empty keyspace) or the closed log ({@code StoreIOException}),
   * as a native engine would read freed memory (10.16, calls racing {@code close()}).
   */
  CLOSE_FREES_BEFORE_MARKING;

  /** The exit status of a JVM the {@link #HALTS_ON_HUGE_VALUE} engine killed. */
  public static final int HALT_STATUS = 71;

  static List<String> names() {
    List<String> out = new ArrayList<>();
    for (Defect d : values()) {
      out.add(d.option());
    }
    return out;
  }

  /** The option value naming this defect. */
  public String option() {
    return name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  static Defect of(String option) {
    return valueOf(option.toUpperCase(Locale.ROOT).replace('-', '_'));
  }
}
