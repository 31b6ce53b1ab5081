package io.kv4j.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The cost of the abstraction: each kv4j adapter engine (rocksdb, lmdb, sqlite) against the same
 * library used directly with the same settings ({@code <engine>-raw}, in {@code
 * io.kv4j.bench.raw}), as the ratio of throughputs kv4j / raw per scenario, thread count and
 * durability, goal at least {@value #GOAL}; and kv4j's disk footprint / raw's, measured at rest
 * after the same writes, goal at most {@value #DISK_GOAL}.
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
    List<DiskPair> out = new ArrayList<>();
    for (Result raw : results) {
      if (!isRaw(raw.engine())
          || !raw.ok()
          || !raw.scenario().equals("footprint")
          || raw.diskBytes() <= 0) {
        continue;
      }
      String engine = raw.engine().substring(0, raw.engine().length() - SUFFIX.length());
      for (Result k : results) {
        if (k.engine().equals(engine)
            && k.ok()
            && k.scenario().equals("footprint")
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

  static String markdown(List<Result> results) {
    StringBuilder b = new StringBuilder("## Cost of the abstraction (kv4j / raw library)\n\n");
    List<Pair> pairs = pairs(results);
    List<DiskPair> disk = diskPairs(results);
    if (pairs.isEmpty() && disk.isEmpty()) {
      return b.append(
              "Not measured in this report: `--abstraction` (or `--full`) adds rocksdb-raw,"
                  + " lmdb-raw and sqlite-raw, the libraries used directly with the engines'"
                  + " settings.\n")
          .toString();
    }
    b.append(
        "Throughput of the kv4j engine divided by the same library used directly with the same"
            + " settings (`<engine>-raw`: minimal correct code, no argument checks, no directory"
            + " lock, no close guards, no group commit). Goal >= 0.9; rows below it are marked"
            + " **low**. Above 1 means kv4j's engine does something the plain code does not (for"
            + " example group commit of concurrent writes in lmdb and sqlite). Single runs of"
            + " about a second on a shared 2-core machine: differences within ~10% are noise.\n\n");
    b.append("| engine | scenario | threads | durability | kv4j ops/s | raw ops/s | kv4j/raw |\n");
    b.append("|---|---|---:|---|---:|---:|---:|\n");
    for (Pair p : pairs) {
      b.append(
          String.format(
              Locale.ROOT,
              "| %s | %s | %d | %s | %s | %s | %.2f%s |%n",
              p.engine(),
              p.kv4j().label(),
              p.kv4j().threads(),
              p.kv4j().durability().name().toLowerCase(Locale.ROOT),
              Report.rate(p.kv4j().opsPerSec()),
              Report.rate(p.raw().opsPerSec()),
              p.ratio(),
              p.ratio() < GOAL ? " **low**" : ""));
    }
    if (!disk.isEmpty()) {
      b.append(
          "\n### Disk (kv4j / raw library)\n\n"
              + "Each store measured at rest (`sync()`, then no flush or compaction running or due"
              + " for RocksDB, polled through `stats()`): allocated blocks (`du`) and apparent"
              + " bytes (file sizes) of the whole store directory, write-ahead logs included."
              + " `after-fillbatch` and `after-fixed-updates` follow the same writes in the same"
              + " order on both sides; after `after-load` and `after-update` the counts depend on"
              + " each store's speed (the timed scenarios run for a fixed time), so a ratio there"
              + " is marked *writes differ* and not judged. Goal <= "
              + DISK_GOAL
              + "; rows above it are marked **high**.\n\n");
      b.append(
          "| engine | phase | durability | writes kv4j / raw | kv4j allocated | raw allocated"
              + " | allocated kv4j/raw | kv4j apparent | raw apparent | apparent kv4j/raw |\n");
      b.append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
      for (DiskPair p : disk) {
        String mark = p.high() ? " **high**" : p.sameWrites() ? "" : " *writes differ*";
        b.append(
            String.format(
                Locale.ROOT,
                "| %s | %s | %s | %,.0f / %,.0f | %s | %s | %.2f%s | %s | %s | %.2f%s |%n",
                p.engine(),
                p.kv4j().phase(),
                p.kv4j().durability().name().toLowerCase(Locale.ROOT),
                p.kv4j().figure("writes"),
                p.raw().figure("writes"),
                Runner.mib(p.kv4j().diskBytes()),
                Runner.mib(p.raw().diskBytes()),
                p.allocatedRatio(),
                mark,
                Runner.mib((long) p.kv4j().figure("apparent-bytes")),
                Runner.mib((long) p.raw().figure("apparent-bytes")),
                p.apparentRatio(),
                mark));
      }
    }
    return b.toString();
  }

  static String json(List<Result> results) {
    StringBuilder b = new StringBuilder("[");
    int i = 0;
    for (Pair p : pairs(results)) {
      b.append(i++ == 0 ? "\n    " : ",\n    ")
          .append(
              String.format(
                  Locale.ROOT,
                  "{\"engine\": %s, \"scenario\": %s, \"phase\": %s, \"threads\": %d,"
                      + " \"durability\": %s, \"kv4jOpsPerSec\": %.1f, \"rawOpsPerSec\": %.1f,"
                      + " \"ratio\": %.3f}",
                  Report.str(p.engine()),
                  Report.str(p.kv4j().scenario()),
                  Report.str(p.kv4j().phase()),
                  p.kv4j().threads(),
                  Report.str(p.kv4j().durability().name()),
                  p.kv4j().opsPerSec(),
                  p.raw().opsPerSec(),
                  p.ratio()));
    }
    return b.append(i == 0 ? "]" : "\n  ]").toString();
  }

  static String diskJson(List<Result> results) {
    StringBuilder b = new StringBuilder("[");
    int i = 0;
    for (DiskPair p : diskPairs(results)) {
      b.append(i++ == 0 ? "\n    " : ",\n    ")
          .append(
              String.format(
                  Locale.ROOT,
                  "{\"engine\": %s, \"phase\": %s, \"durability\": %s, \"kv4jWrites\": %.0f,"
                      + " \"rawWrites\": %.0f, \"kv4jAllocatedBytes\": %d, \"rawAllocatedBytes\":"
                      + " %d, \"allocatedRatio\": %.3f, \"kv4jApparentBytes\": %.0f,"
                      + " \"rawApparentBytes\": %.0f, \"apparentRatio\": %.3f}",
                  Report.str(p.engine()),
                  Report.str(p.kv4j().phase()),
                  Report.str(p.kv4j().durability().name()),
                  p.kv4j().figure("writes"),
                  p.raw().figure("writes"),
                  p.kv4j().diskBytes(),
                  p.raw().diskBytes(),
                  p.allocatedRatio(),
                  p.kv4j().figure("apparent-bytes"),
                  p.raw().figure("apparent-bytes"),
                  p.apparentRatio()));
    }
    return b.append(i == 0 ? "]" : "\n  ]").toString();
  }
}
