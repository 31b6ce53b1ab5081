package io.kv4j.bench;

import io.kv4j.Feature;
import io.kv4j.Limits;
import io.kv4j.StoreInfo;
import io.kv4j.spi.StoreProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What an engine gives up, derived at run time from what it declares (the {@link StoreInfo} of the
 * store the run opened, else its provider), then what the api cannot declare yet.
 */
final class Caveats {
  /**
   * What the api cannot declare yet (no {@link Feature} or {@link StoreInfo} field says "one writer
   * at a time", "the key index lives in RAM" or "overwrites in place"), from the engines' READMEs.
   * Everything an engine can declare (features, limits) is read from it at run time instead.
   */
  static final Map<String, String> UNDECLARED =
      Map.of(
          "lmdb",
          "one writer at a time: concurrent writes queue for LMDB's single writer",
          "sqlite",
          "one writer at a time: writes are serialized (and group-committed)",
          "hashlog",
          "keeps every key in a RAM index: memory grows with the key count",
          "chronicle-map",
          "capacity fixed at creation (entries); nothing forces the mapping to disk, so no"
              + " SYNC mode; overwrites in place: a kill -9 during an overwrite can lose the"
              + " key (TCK rule 7.5)",
          "mapdb",
          "writers serialize; BUFFERED runs without its write-ahead log (crash-safe=false):"
              + " a kill -9 mid-write can leave a file it refuses to open",
          "mvstore",
          "BUFFERED uses its background auto-commit (crash-safe=false): a kill -9 loses up to"
              + " a second of acknowledged writes",
          "memory",
          "reference only, never a pick",
          "floor",
          "a read ceiling, not a store: one index probe and one copy per get, no checksum,"
              + " no reader guard; never a pick",
          "floor-crc",
          "the read ceiling of a verifying engine, not a store: the floor plus a CRC32C checked"
              + " on every get; never a pick");

  private final Map<String, StoreProvider> engines;
  private final Map<String, StoreInfo> storeInfos;

  Caveats(Map<String, StoreProvider> engines, Map<String, StoreInfo> storeInfos) {
    this.engines = engines;
    this.storeInfos = storeInfos;
  }

  /**
   * What an engine gives up, as one line: first what it declares at run time (the features it lacks
   * and limits narrower than another engine's in this run), then what the api cannot declare yet
   * ({@link #UNDECLARED}). Empty only when the engine declares every feature and the widest limits
   * of the run and has no undeclared caveat.
   *
   * @param engine the engine id
   * @return the caveats, or empty
   */
  String of(String engine) {
    List<String> c = new ArrayList<>();
    Set<Feature> f = declaredFeatures(engine);
    if (f != null) {
      features(f, c);
    }
    Limits limits = declaredLimits(engine);
    if (limits != null) {
      limits(limits, c);
    }
    String known = UNDECLARED.get(engine);
    if (known != null) {
      c.add(known);
    }
    return String.join("; ", c);
  }

  private static void features(Set<Feature> f, List<String> c) {
    if (!f.contains(Feature.PERSISTENT)) {
      c.add("not persistent");
    } else if (!f.contains(Feature.CHECKSUMS)) {
      c.add(
          "no checksums (does not declare CHECKSUMS): a damaged record can be read back as a"
              + " wrong value or a missing key");
    }
    if (!f.contains(Feature.ORDERED_SCAN)) {
      c.add("no ordered scans");
    } else if (!f.contains(Feature.REVERSE_SCAN)) {
      c.add("no reverse scans");
    }
    if (f.contains(Feature.ORDERED_SCAN) && !f.contains(Feature.SNAPSHOT_SCAN)) {
      c.add("no snapshot scans: a cursor can see writes made while it runs");
    }
    if (!f.contains(Feature.ATOMIC_BATCH)) {
      c.add("no atomic batches");
    }
  }

  private void limits(Limits limits, List<String> c) {
    int widestKey = Limits.MIN_MAX_KEY_SIZE;
    int widestValue = Limits.MIN_MAX_VALUE_SIZE;
    for (String e : engines.keySet()) {
      Limits l = declaredLimits(e);
      if (l != null) {
        widestKey = Math.max(widestKey, l.maxKeySize());
        widestValue = Math.max(widestValue, l.maxValueSize());
      }
    }
    if (limits.maxKeySize() < widestKey) {
      c.add(
          "keys up to "
              + Format.bytes(limits.maxKeySize())
              + " (others here: "
              + Format.bytes(widestKey)
              + ")");
    } else if (limits.maxKeySize() == Limits.MIN_MAX_KEY_SIZE) {
      c.add("keys up to " + Format.bytes(limits.maxKeySize()) + " (the kv4j minimum)");
    }
    if (limits.maxValueSize() < widestValue) {
      c.add(
          "values up to "
              + Format.bytes(limits.maxValueSize())
              + " (others here: "
              + Format.bytes(widestValue)
              + ")");
    }
  }

  /** The features of the store the run opened, else the provider's; null for an unknown engine. */
  private Set<Feature> declaredFeatures(String engine) {
    StoreInfo info = storeInfos.get(engine);
    if (info != null) {
      return info.features();
    }
    StoreProvider p = engines.get(engine);
    return p == null ? null : p.features();
  }

  private Limits declaredLimits(String engine) {
    StoreInfo info = storeInfos.get(engine);
    if (info != null) {
      return info.limits();
    }
    StoreProvider p = engines.get(engine);
    return p == null ? null : p.limits();
  }
}
