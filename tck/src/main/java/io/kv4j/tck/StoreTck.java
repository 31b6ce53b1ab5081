package io.kv4j.tck;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import java.nio.file.Path;

/**
 * The kv4j compatibility kit. Extend it with the config of your engine and run it with JUnit 5:
 *
 * <pre>{@code
 * class MyEngineTckTest extends StoreTck {
 *   @Override
 *   protected StoreConfig config(Path directory, Durability durability) {
 *     return StoreConfig.builder("my-engine").path(directory).durability(durability).build();
 *   }
 * }
 * }</pre>
 *
 * <p>Each test is one rule of {@code tck/SPEC.md}, named {@code required_r<group>_<n>_<what>}; it
 * is a default method of the {@code Tests} interface of the rule's group class, beside its body,
 * opened by rule number ({@code Group05Batches} for 5.x). The rules cannot be overridden: a
 * subclass that declares a method of a rule's name fails the run. Rules for features the engine
 * does not declare are skipped with a message naming the feature, never counted as passed. A
 * summary (passed / failed / skipped with reasons, in rule order) is written to {@code
 * target/kv4j-tck/<TestClass>.md} and {@code .json}.
 *
 * <p>The config is used, not an object: the crash and damage rules open the engine in a child JVM
 * from {@link StoreConfig#toUri()}, on this JVM's classpath and with its module flags (see {@code
 * childJvmOptions()}). A config of an engine the registry of {@code Stores} does not hold ({@link
 * StoreConfig#builderFor}) also reaches them: the child makes its provider from the class name,
 * with its public no-argument constructor.
 *
 * <p>How deep and how long the kit runs (operations, threads, crash rounds, keys, the seed, time
 * limits) and whether the engine's data lives in files under its path are its {@link
 * TckEnvironment}: override {@link #environment()} to change them. For one run, a JUnit
 * configuration parameter or system property overrides each ({@code -Dkv4j.tck.seed=8812734},
 * {@code -Dkv4j.tck.ops=200000}; the names are in {@link TckEnvironment}). To run the kit from code
 * against an engine URI, use {@link TckRunner}.
 *
 * <p>The report is rewritten as each rule starts and ends, beside a {@code <TestClass>.progress}
 * file with one line per start and per result: an engine that kills the JVM leaves a report whose
 * last line names the rule that was running. Each row carries the rule's scope from SPEC.md: what a
 * pass proves and what it does not.
 *
 * <p>The damage rules (group 12) need to know which files of the store directory are diagnostic
 * logs rather than data: override {@link #isDiagnosticFile(String)}. Rule 10.15 needs a way to make
 * the engine's background work fail: override {@link #failBackgroundWork(Store)}.
 */
public abstract class StoreTck extends TckBase
    implements Group01Basics.Tests,
        Group02Order.Tests,
        Group03Ranges.Tests,
        Group04Cursors.Tests,
        Group05Batches.Tests,
        Group06Durability.Tests,
        Group07Crashes.Tests,
        Group08Concurrency.Tests,
        Group09Limits.Tests,
        Group10Lifecycle.Tests,
        Group11Model.Tests,
        Group12Damage.Tests,
        Group13ConditionalWrites.Tests,
        Group14Snapshots.Tests,
        Group15MultiGet.Tests,
        Group16Backup.Tests,
        Group17Keyspaces.Tests,
        Group18ConditionalBatches.Tests,
        Group19Histories.Tests {

  /** For subclasses. */
  protected StoreTck() {}

  /**
   * How to open the engine under test.
   *
   * @param directory a directory the store owns; it may not exist yet
   * @param durability the durability to open with
   * @return the config, built with {@link StoreConfig#builder(String)}
   */
  @Override
  protected abstract StoreConfig config(Path directory, Durability durability);

  /**
   * The environment the kit runs in; the overrides (system properties, JUnit configuration
   * parameters) are applied to it. Called once per rule.
   *
   * @return {@link TckEnvironment#defaults()} unless overridden
   */
  @Override
  protected TckEnvironment environment() {
    return TckEnvironment.defaults();
  }

  /**
   * Whether the engine keeps its data in files under the configured path. Rules 10.7 and 12.x
   * damage those files; an engine whose data lives elsewhere (a database server) returns false and
   * the rule is skipped with that reason.
   *
   * @return the environment's {@link TckEnvironment#dataLivesInLocationFiles()} (by default true,
   *     for embedded engines)
   */
  @Override
  protected boolean dataLivesInLocationFiles() {
    return super.dataLivesInLocationFiles();
  }

  /**
   * Whether a file of the store directory is one the engine rewrites freely and that holds no data,
   * such as RocksDB's info {@code LOG} and {@code LOG.old.*}. The damage rules (group 12) never
   * damage such a file, and do not count it when they check that a failed open deleted or shortened
   * nothing. The lock file ({@code kv4j.lock}) is always exempt.
   *
   * @param fileName the file's path relative to the store directory, with {@code /} between
   *     directories (just the name for a file directly in it)
   * @return false (the default): every file holds data the engine must protect
   */
  @Override
  protected boolean isDiagnosticFile(String fileName) {
    return false;
  }

  /**
   * Whether a file of the store directory holds locks and reader slots that every open writes,
   * read-only opens included, and no data: LMDB's {@code lock.mdb} (its reader table), SQLite's
   * {@code -shm} (the WAL index, where readers keep their read marks). Rule 10.14 checks that a
   * read-only open changes no file of a crash image and does not count such a file; the lock file
   * ({@code kv4j.lock}) and the diagnostic files ({@link #isDiagnosticFile(String)}) are exempt
   * too. The damage rules still damage it.
   *
   * @param fileName the file's path relative to the store directory, with {@code /} between
   *     directories
   * @return false (the default): a read-only open writes no file but {@code kv4j.lock}
   */
  @Override
  protected boolean isLockFile(String fileName) {
    return false;
  }

  /**
   * Makes the engine's background work (compaction, sealing, flushing, group commit...) fail from
   * now on, the way an Error or an I/O failure inside that thread would; returns false when the
   * engine has no background work the kit can fail, and the rule is then skipped with that reason.
   * Engines override it in their TCK subclass, from their test tree.
   *
   * <p>Rule 10.15 calls it once, on a store it opened with {@code BUFFERED} and wrote to, then
   * keeps writing and syncing until {@code stats().health()} leaves {@code OK}: the failure must
   * become visible there and in {@code verify()}.
   *
   * @param store the store under test, as {@link io.kv4j.Stores#open} returned it
   * @return whether the engine's background work now fails (false, the default: it has none the kit
   *     can fail)
   */
  @Override
  protected boolean failBackgroundWork(Store store) {
    return false;
  }
}
