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
  TORN_OVERWRITE;

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
