package io.kv4j.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * The cost of the abstraction: each kv4j adapter engine (rocksdb, lmdb, sqlite) against the same
 * library used directly with the same settings ({@code <engine>-raw}, in {@code
 * io.kv4j.bench.raw}), as the ratio of throughputs kv4j / raw per scenario, thread count and
 * durability, goal at least {@value #GOAL}; and kv4j's disk footprint / raw's, measured at rest
 * after the same writes, goal at most {@value #DISK_GOAL}. Which rows pair up and which ratios miss
 * the goal; {@link AbstractionReport} writes them.
 */
final class Abstraction {
  static final double GOAL = 0.9;
  static final double DISK_GOAL = 1.1;
  static final String SUFFIX = "-raw";

  private Abstraction() {}

  /**
   * One comparison.
   *
   * @param engine the kv4j engine
   * @param kv4j its row
   * @param raw the raw library's row
   */
  record Pair(String engine, Result kv4j, Result raw) {
    double ratio() {
      return kv4j.opsPerSec() / raw.opsPerSec();
    }

    /** Whether kv4j is below the goal: {@link #GOAL} times the raw library's throughput. */
    boolean low() {
      return ratio() < GOAL;
    }
  }

  /**
   * Footprints of the same phase and durability.
   *
   * @param engine the kv4j engine
   * @param kv4j its footprint row
   * @param raw the raw library's
   */
  record DiskPair(String engine, Result kv4j, Result raw) {
    double allocatedRatio() {
      return (double) kv4j.diskBytes() / raw.diskBytes();
    }

    double apparentRatio() {
      return kv4j.figure("apparent-bytes") / raw.figure("apparent-bytes");
    }

    /**
     * Whether both had the same writes: only then is the ratio a fact about the engine (after the
     * timed scenarios, the faster store has made more writes).
     */
    boolean sameWrites() {
      return kv4j.figure("writes") == raw.figure("writes");
    }

    boolean high() {
      return sameWrites() && Math.max(allocatedRatio(), apparentRatio()) > DISK_GOAL;
    }
  }

  static List<DiskPair> diskPairs(List<Result> results) {
    String footprint = Catalogue.standard().footprint().id();
    List<DiskPair> out = new ArrayList<>();
    for (Result raw : results) {
      if (!isRaw(raw.engine())
          || !raw.ok()
          || !raw.scenario().equals(footprint)
          || raw.diskBytes() <= 0) {
        continue;
      }
      String engine = raw.engine().substring(0, raw.engine().length() - SUFFIX.length());
      for (Result k : results) {
        if (k.engine().equals(engine)
            && k.ok()
            && k.scenario().equals(footprint)
            && k.phase().equals(raw.phase())
            && k.durability() == raw.durability()) {
          out.add(new DiskPair(engine, k, raw));
        }
      }
    }
    return out;
  }

  static boolean isRaw(String id) {
    return id.endsWith(SUFFIX);
  }

  static List<Pair> pairs(List<Result> results) {
    List<Pair> out = new ArrayList<>();
    for (Result raw : results) {
      if (!isRaw(raw.engine()) || !raw.ok() || raw.opsPerSec() <= 0) {
        continue;
      }
      String engine = raw.engine().substring(0, raw.engine().length() - SUFFIX.length());
      for (Result k : results) {
        if (k.engine().equals(engine)
            && k.ok()
            && k.opsPerSec() > 0
            && k.scenario().equals(raw.scenario())
            && k.phase().equals(raw.phase())
            && k.threads() == raw.threads()
            && k.durability() == raw.durability()) {
          out.add(new Pair(engine, k, raw));
        }
      }
    }
    return out;
  }
}
