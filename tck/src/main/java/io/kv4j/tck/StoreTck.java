package io.kv4j.tck;

import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

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
 * <p>Each test is one rule of {@code tck/SPEC.md}, named {@code required_r<group>_<n>_<what>}; its
 * body is in the rule's group class, opened by rule number ({@code Group05Batches} for 5.x). Rules
 * for features the engine does not declare are skipped with a message naming the feature, never
 * counted as passed. A summary (passed / failed / skipped with reasons, in rule order) is written
 * to {@code target/kv4j-tck/<TestClass>.md} and {@code .json}.
 *
 * <p>The config is used, not an object: the crash and damage rules open the engine in a child JVM
 * from {@link StoreConfig#toUri()}, on this JVM's classpath and with its module flags (see {@code
 * childJvmOptions()}).
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
 * logs rather than data: override {@link #isDiagnosticFile(String)}.
 */
public abstract class StoreTck extends TckBase {

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

  // One test per rule, in rule order; each runs the rule in its group (Group01Basics ...).

  @Test
  void required_r1_1_putThenGet() {
    new Group01Basics(this).required_r1_1_putThenGet();
  }

  @Test
  void required_r1_2_overwriteReplacesValue() {
    new Group01Basics(this).required_r1_2_overwriteReplacesValue();
  }

  @Test
  void required_r1_3_deleteRemovesKey() {
    new Group01Basics(this).required_r1_3_deleteRemovesKey();
  }

  @Test
  void required_r1_4_absentKeyIsNull() {
    new Group01Basics(this).required_r1_4_absentKeyIsNull();
  }

  @Test
  void required_r1_5_emptyValueIsNotAbsent() {
    new Group01Basics(this).required_r1_5_emptyValueIsNotAbsent();
  }

  @Test
  void required_r1_6_deleteOfAbsentKeyIsNoError() {
    new Group01Basics(this).required_r1_6_deleteOfAbsentKeyIsNoError();
  }

  @Test
  void required_r1_7_returnedArraysAreCopies() {
    new Group01Basics(this).required_r1_7_returnedArraysAreCopies();
  }

  @Test
  void required_r1_8_inputArraysAreNotRetained() {
    new Group01Basics(this).required_r1_8_inputArraysAreNotRetained();
  }

  @Test
  void required_r1_9_manyKeysIndependent() {
    new Group01Basics(this).required_r1_9_manyKeysIndependent();
  }

  @Test
  void required_r2_1_unsignedByteOrder() {
    new Group02Order(this).required_r2_1_unsignedByteOrder();
  }

  @Test
  void required_r2_2_lexicographicPrefixFirst() {
    new Group02Order(this).required_r2_2_lexicographicPrefixFirst();
  }

  @Test
  void required_r2_3_maxLengthKeyRoundTrips() {
    new Group02Order(this).required_r2_3_maxLengthKeyRoundTrips();
  }

  @Test
  void required_r2_4_overLimitKeyRejectedWithLimit() {
    new Group02Order(this).required_r2_4_overLimitKeyRejectedWithLimit();
  }

  @Test
  void required_r2_5_emptyKeyRejected() {
    new Group02Order(this).required_r2_5_emptyKeyRejected();
  }

  @Test
  void required_r2_6_nullArgumentsRejected() {
    new Group02Order(this).required_r2_6_nullArgumentsRejected();
  }

  @Test
  void required_r2_7_everyByteValueIsAKey() {
    new Group02Order(this).required_r2_7_everyByteValueIsAKey();
  }

  @Test
  void required_r3_1_boundMatrixForward() {
    new Group03Ranges(this).required_r3_1_boundMatrixForward();
  }

  @Test
  void required_r3_2_boundMatrixReverse() {
    new Group03Ranges(this).required_r3_2_boundMatrixReverse();
  }

  @Test
  void required_r3_3_prefixRanges() {
    new Group03Ranges(this).required_r3_3_prefixRanges();
  }

  @Test
  void required_r3_4_limits() {
    new Group03Ranges(this).required_r3_4_limits();
  }

  @Test
  void required_r3_5_emptyAndInvertedRanges() {
    new Group03Ranges(this).required_r3_5_emptyAndInvertedRanges();
  }

  @Test
  void required_r3_6_boundsPastBothEnds() {
    new Group03Ranges(this).required_r3_6_boundsPastBothEnds();
  }

  @Test
  void required_r3_7_scanOfEmptyStore() {
    new Group03Ranges(this).required_r3_7_scanOfEmptyStore();
  }

  @Test
  void required_r3_8_emptyAndOverlongBounds() {
    new Group03Ranges(this).required_r3_8_emptyAndOverlongBounds();
  }

  @Test
  void required_r3_9_prefixPaginationForwardAndReverse() {
    new Group03Ranges(this).required_r3_9_prefixPaginationForwardAndReverse();
  }

  @Test
  void required_r4_1_closeIsIdempotent() {
    new Group04Cursors(this).required_r4_1_closeIsIdempotent();
  }

  @Test
  void required_r4_2_useAfterCloseIsClearError() {
    new Group04Cursors(this).required_r4_2_useAfterCloseIsClearError();
  }

  @Test
  void required_r4_3_cursorDiesWithStore() {
    new Group04Cursors(this).required_r4_3_cursorDiesWithStore();
  }

  @Test
  void required_r4_4_manyCursorsAtOnce() {
    new Group04Cursors(this).required_r4_4_manyCursorsAtOnce();
  }

  @Test
  void required_r4_5_snapshotCursorSeesNoLaterWrites() {
    new Group04Cursors(this).required_r4_5_snapshotCursorSeesNoLaterWrites();
  }

  @Test
  void required_r4_6_cursorUnderWritesStaysOrdered() {
    new Group04Cursors(this).required_r4_6_cursorUnderWritesStaysOrdered();
  }

  @Test
  void required_r4_7_exhaustedCursor() {
    new Group04Cursors(this).required_r4_7_exhaustedCursor();
  }

  @Test
  void required_r4_8_streamAndForEachCloseTheCursor() {
    new Group04Cursors(this).required_r4_8_streamAndForEachCloseTheCursor();
  }

  @Test
  void required_r4_9_repeatedHasNextDoesNotAdvance() {
    new Group04Cursors(this).required_r4_9_repeatedHasNextDoesNotAdvance();
  }

  @Test
  void required_r4_10_forEachReleasesCursorWhenActionThrows() {
    new Group04Cursors(this).required_r4_10_forEachReleasesCursorWhenActionThrows();
  }

  @Test
  void required_r5_1_batchAppliesAllInOrder() {
    new Group05Batches(this).required_r5_1_batchAppliesAllInOrder();
  }

  @Test
  void required_r5_2_invalidOperationAppliesNothing() {
    new Group05Batches(this).required_r5_2_invalidOperationAppliesNothing();
  }

  @Test
  void required_r5_3_putThenDeleteInOneBatch() {
    new Group05Batches(this).required_r5_3_putThenDeleteInOneBatch();
  }

  @Test
  void required_r5_4_emptyBatchIsNoOp() {
    new Group05Batches(this).required_r5_4_emptyBatchIsNoOp();
  }

  @Test
  void required_r5_5_largeBatchOf10000() {
    new Group05Batches(this).required_r5_5_largeBatchOf10000();
  }

  @Test
  void required_r5_6_batchWith16MiBOfValues() {
    new Group05Batches(this).required_r5_6_batchWith16MiBOfValues();
  }

  @Test
  void required_r5_7_batchIsReusableAndNotRetained() {
    new Group05Batches(this).required_r5_7_batchIsReusableAndNotRetained();
  }

  @Test
  void required_r5_8_batchWithoutFeatureIsRefused() {
    new Group05Batches(this).required_r5_8_batchWithoutFeatureIsRefused();
  }

  @Test
  void required_r6_1_dataSurvivesReopen() {
    new Group06Durability(this).required_r6_1_dataSurvivesReopen();
  }

  @Test
  void required_r6_2_deletesStayDeleted() {
    new Group06Durability(this).required_r6_2_deletesStayDeleted();
  }

  @Test
  void required_r6_3_manyReopenCycles() {
    new Group06Durability(this).required_r6_3_manyReopenCycles();
  }

  @Test
  void required_r6_4_syncThenReopen() {
    new Group06Durability(this).required_r6_4_syncThenReopen();
  }

  @Test
  void required_r6_5_edgeValuesSurviveReopen() {
    new Group06Durability(this).required_r6_5_edgeValuesSurviveReopen();
  }

  @Test
  void required_r7_1_killSyncKeepsAcknowledgedWrites() throws Exception {
    new Group07Crashes(this).required_r7_1_killSyncKeepsAcknowledgedWrites();
  }

  @Test
  void required_r7_2_killBufferedKeepsAcknowledgedWrites() throws Exception {
    new Group07Crashes(this).required_r7_2_killBufferedKeepsAcknowledgedWrites();
  }

  @Test
  void required_r7_3_crashNeverLeavesHalfABatch() throws Exception {
    new Group07Crashes(this).required_r7_3_crashNeverLeavesHalfABatch();
  }

  @Test
  void required_r7_4_crashedStoreOpensAndKeepsNewWrites() throws Exception {
    new Group07Crashes(this).required_r7_4_crashedStoreOpensAndKeepsNewWrites();
  }

  @Test
  void required_r7_5_killDuringOverwritesLeavesOldOrNewValue() throws Exception {
    new Group07Crashes(this).required_r7_5_killDuringOverwritesLeavesOldOrNewValue();
  }

  @Test
  void required_r7_6_syncAcknowledgesOnlyAfterASync() throws Exception {
    new Group07Crashes(this).required_r7_6_syncAcknowledgesOnlyAfterASync();
  }

  @Test
  void required_r8_1_threadsOnDisjointKeys() throws Exception {
    new Group08Concurrency(this).required_r8_1_threadsOnDisjointKeys();
  }

  @Test
  void required_r8_2_threadsOnSharedKeys() throws Exception {
    new Group08Concurrency(this).required_r8_2_threadsOnSharedKeys();
  }

  @Test
  void required_r8_3_scansDuringWrites() throws Exception {
    new Group08Concurrency(this).required_r8_3_scansDuringWrites();
  }

  @Test
  void required_r8_4_concurrentBatchesStayAtomic() throws Exception {
    new Group08Concurrency(this).required_r8_4_concurrentBatchesStayAtomic();
  }

  @Test
  void required_r8_5_exactKeyCountUnderConcurrentWriters() throws Exception {
    new Group08Concurrency(this).required_r8_5_exactKeyCountUnderConcurrentWriters();
  }

  @Test
  void required_r8_6_batchesAreNeverHalfVisible() throws Exception {
    new Group08Concurrency(this).required_r8_6_batchesAreNeverHalfVisible();
  }

  @Test
  void required_r8_7_sharedKeysKeepTheServedWinnerAfterReopen() throws Exception {
    new Group08Concurrency(this).required_r8_7_sharedKeysKeepTheServedWinnerAfterReopen();
  }

  @Test
  void required_r8_8_manyWritersMatchModel() throws Exception {
    new Group08Concurrency(this).required_r8_8_manyWritersMatchModel();
  }

  @Test
  void required_r9_1_declaredLimitsMeetTheMinimum() {
    new Group09Limits(this).required_r9_1_declaredLimitsMeetTheMinimum();
  }

  @Test
  void required_r9_2_sixteenMiBValue() {
    new Group09Limits(this).required_r9_2_sixteenMiBValue();
  }

  @Test
  void required_r9_3_overLimitValueRejected() {
    new Group09Limits(this).required_r9_3_overLimitValueRejected();
  }

  @Test
  void required_r9_4_hundredThousandKeys() {
    new Group09Limits(this).required_r9_4_hundredThousandKeys();
  }

  @Test
  void required_r10_1_closeIsIdempotent() {
    new Group10Lifecycle(this).required_r10_1_closeIsIdempotent();
  }

  @Test
  void required_r10_2_useAfterCloseIsStoreClosedException() {
    new Group10Lifecycle(this).required_r10_2_useAfterCloseIsStoreClosedException();
  }

  @Test
  void required_r10_3_secondOpenIsLocked() {
    new Group10Lifecycle(this).required_r10_3_secondOpenIsLocked();
  }

  @Test
  void required_r10_4_lockReleasedOnClose() {
    new Group10Lifecycle(this).required_r10_4_lockReleasedOnClose();
  }

  @Test
  void required_r10_5_readOnlyRefusesWrites() {
    new Group10Lifecycle(this).required_r10_5_readOnlyRefusesWrites();
  }

  @Test
  void required_r10_6_missingLocationWithoutCreate() {
    new Group10Lifecycle(this).required_r10_6_missingLocationWithoutCreate();
  }

  @Test
  void required_r10_7_corruptLocationIsReported() throws IOException {
    new Group10Lifecycle(this).required_r10_7_corruptLocationIsReported();
  }

  @Test
  void required_r10_8_infoDescribesTheStore() {
    new Group10Lifecycle(this).required_r10_8_infoDescribesTheStore();
  }

  @Test
  void required_r10_9_statsCountKeys() {
    new Group10Lifecycle(this).required_r10_9_statsCountKeys();
  }

  @Test
  void required_r10_10_compactKeepsEveryEntry() {
    new Group10Lifecycle(this).required_r10_10_compactKeepsEveryEntry();
  }

  @Test
  void required_r10_11_secondProcessIsLocked() throws Exception {
    new Group10Lifecycle(this).required_r10_11_secondProcessIsLocked();
  }

  @Test
  void required_r10_12_compactDuringWritesLosesNothing() throws Exception {
    new Group10Lifecycle(this).required_r10_12_compactDuringWritesLosesNothing();
  }

  @Test
  void required_r11_1_randomOperationsMatchModel() {
    new Group11Model(this).required_r11_1_randomOperationsMatchModel();
  }

  @Test
  void required_r12_1_fileTruncatedToHalf() throws Exception {
    new Group12Damage(this).required_r12_1_fileTruncatedToHalf();
  }

  @Test
  void required_r12_2_fileTruncatedToZero() throws Exception {
    new Group12Damage(this).required_r12_2_fileTruncatedToZero();
  }

  @Test
  void required_r12_3_fileDeleted() throws Exception {
    new Group12Damage(this).required_r12_3_fileDeleted();
  }

  @Test
  void required_r12_4_bitFlipped() throws Exception {
    new Group12Damage(this).required_r12_4_bitFlipped();
  }

  @Test
  void required_r12_5_blockZeroed() throws Exception {
    new Group12Damage(this).required_r12_5_blockZeroed();
  }

  @Test
  void required_r12_6_foreignStoreRefused() throws Exception {
    new Group12Damage(this).required_r12_6_foreignStoreRefused();
  }

  @Test
  void required_r13_1_conditionalWritesMatchAModel() {
    new Group13ConditionalWrites(this).required_r13_1_conditionalWritesMatchAModel();
  }

  @Test
  void required_r13_2_replaceLoopsLoseNoIncrement() throws Exception {
    new Group13ConditionalWrites(this).required_r13_2_replaceLoopsLoseNoIncrement();
  }

  @Test
  void required_r13_3_putIfAbsentHasOneWinner() throws Exception {
    new Group13ConditionalWrites(this).required_r13_3_putIfAbsentHasOneWinner();
  }

  @Test
  void required_r13_4_conditionalWritesWithoutFeatureAreRefused() {
    new Group13ConditionalWrites(this).required_r13_4_conditionalWritesWithoutFeatureAreRefused();
  }

  @Test
  void required_r14_1_snapshotIgnoresLaterWrites() {
    new Group14Snapshots(this).required_r14_1_snapshotIgnoresLaterWrites();
  }

  @Test
  void required_r14_2_snapshotNeverSeesHalfABatch() throws Exception {
    new Group14Snapshots(this).required_r14_2_snapshotNeverSeesHalfABatch();
  }

  @Test
  void required_r14_3_closingASnapshotClosesItsCursors() {
    new Group14Snapshots(this).required_r14_3_closingASnapshotClosesItsCursors();
  }

  @Test
  void required_r14_4_snapshotSurvivesCompaction() {
    new Group14Snapshots(this).required_r14_4_snapshotSurvivesCompaction();
  }

  @Test
  void required_r14_5_snapshotWithoutFeatureIsRefused() {
    new Group14Snapshots(this).required_r14_5_snapshotWithoutFeatureIsRefused();
  }

  @Test
  void required_r15_1_getAllReturnsValuesInKeyOrder() {
    new Group15MultiGet(this).required_r15_1_getAllReturnsValuesInKeyOrder();
  }

  @Test
  void required_r16_1_backupIsAnOpenableCopy() {
    new Group16Backup(this).required_r16_1_backupIsAnOpenableCopy();
  }

  @Test
  void required_r16_2_backupWhileWritingHoldsAPrefix() throws Exception {
    new Group16Backup(this).required_r16_2_backupWhileWritingHoldsAPrefix();
  }

  @Test
  void required_r16_3_backupRefusesATargetHoldingData() throws Exception {
    new Group16Backup(this).required_r16_3_backupRefusesATargetHoldingData();
  }

  @Test
  void required_r16_4_backupWithoutFeatureIsRefused() {
    new Group16Backup(this).required_r16_4_backupWithoutFeatureIsRefused();
  }

  @Test
  void required_r17_1_keyspacesAreIndependent() {
    new Group17Keyspaces(this).required_r17_1_keyspacesAreIndependent();
  }

  @Test
  void required_r17_2_keyspacesSurviveReopen() {
    new Group17Keyspaces(this).required_r17_2_keyspacesSurviveReopen();
  }

  @Test
  void required_r17_3_dropRemovesAKeyspaceAndClosesItsHandles() {
    new Group17Keyspaces(this).required_r17_3_dropRemovesAKeyspaceAndClosesItsHandles();
  }

  @Test
  void required_r17_4_namesAreChecked() {
    new Group17Keyspaces(this).required_r17_4_namesAreChecked();
  }

  @Test
  void required_r17_5_handlesCloseWithTheirStore() {
    new Group17Keyspaces(this).required_r17_5_handlesCloseWithTheirStore();
  }

  @Test
  void required_r17_6_batchesSpanKeyspacesAtomically() {
    new Group17Keyspaces(this).required_r17_6_batchesSpanKeyspacesAtomically();
  }

  @Test
  void required_r17_7_keyspaceCallsWithoutTheFeatureAreRefused() {
    new Group17Keyspaces(this).required_r17_7_keyspaceCallsWithoutTheFeatureAreRefused();
  }

  @Test
  void required_r17_8_aKeyspaceHandleKeepsTheStoreContract() throws Exception {
    new Group17Keyspaces(this).required_r17_8_aKeyspaceHandleKeepsTheStoreContract();
  }

  @Test
  void required_r17_9_backupHoldsEveryKeyspace() {
    new Group17Keyspaces(this).required_r17_9_backupHoldsEveryKeyspace();
  }

  @Test
  void required_r17_10_readOnlyOpensExistingKeyspacesOnly() {
    new Group17Keyspaces(this).required_r17_10_readOnlyOpensExistingKeyspacesOnly();
  }

  @Test
  void required_r18_1_writeIfMatchesAModel() {
    new Group18ConditionalBatches(this).required_r18_1_writeIfMatchesAModel();
  }

  @Test
  void required_r18_2_failedConditionAppliesNothing() {
    new Group18ConditionalBatches(this).required_r18_2_failedConditionAppliesNothing();
  }

  @Test
  void required_r18_3_conditionsSeeTheStoreBeforeTheBatch() {
    new Group18ConditionalBatches(this).required_r18_3_conditionsSeeTheStoreBeforeTheBatch();
  }

  @Test
  void required_r18_4_optimisticTransfersLoseNothing() throws Exception {
    new Group18ConditionalBatches(this).required_r18_4_optimisticTransfersLoseNothing();
  }

  @Test
  void required_r18_5_conditionsAreNeverIgnored() {
    new Group18ConditionalBatches(this).required_r18_5_conditionsAreNeverIgnored();
  }

  @Test
  void required_r18_6_keyspaceConditionsCheckTheirKeyspace() {
    new Group18ConditionalBatches(this).required_r18_6_keyspaceConditionsCheckTheirKeyspace();
  }

  @Test
  void required_r18_7_conditionalBatchesSurviveReopen() {
    new Group18ConditionalBatches(this).required_r18_7_conditionalBatchesSurviveReopen();
  }
}
