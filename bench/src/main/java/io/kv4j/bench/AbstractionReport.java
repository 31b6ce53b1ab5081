package io.kv4j.bench;

import java.util.List;
import java.util.Locale;

/** The cost of the abstraction as report.md's section and results.json's arrays. */
final class AbstractionReport {
  private AbstractionReport() {}

  /**
   * The "Cost of the abstraction" section: the throughput ratios, then the disk table.
   *
   * @param results every row
   * @return markdown, starting with a level-2 heading
   */
  static String markdown(List<Result> results) {
    StringBuilder b = new StringBuilder("## Cost of the abstraction (kv4j / raw library)\n\n");
    List<Abstraction.Pair> pairs = Abstraction.pairs(results);
    List<Abstraction.DiskPair> disk = Abstraction.diskPairs(results);
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
    for (Abstraction.Pair p : pairs) {
      b.append(
          String.format(
              Locale.ROOT,
              "| %s | %s | %d | %s | %s | %s | %.2f%s |%n",
              p.engine(),
              p.kv4j().label(),
              p.kv4j().threads(),
              p.kv4j().durability().name().toLowerCase(Locale.ROOT),
              Format.rate(p.kv4j().opsPerSec()),
              Format.rate(p.raw().opsPerSec()),
              p.ratio(),
              p.low() ? " **low**" : ""));
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
              + Abstraction.DISK_GOAL
              + "; rows above it are marked **high**.\n\n");
      b.append(
          "| engine | phase | durability | writes kv4j / raw | kv4j allocated | raw allocated"
              + " | allocated kv4j/raw | kv4j apparent | raw apparent | apparent kv4j/raw |\n");
      b.append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
      for (Abstraction.DiskPair p : disk) {
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
                Format.mib(p.kv4j().diskBytes()),
                Format.mib(p.raw().diskBytes()),
                p.allocatedRatio(),
                mark,
                Format.mib((long) p.kv4j().figure("apparent-bytes")),
                Format.mib((long) p.raw().figure("apparent-bytes")),
                p.apparentRatio(),
                mark));
      }
    }
    return b.toString();
  }

  /**
   * The throughput pairs as a JSON array.
   *
   * @param results every row
   * @return the array
   */
  static String json(List<Result> results) {
    StringBuilder b = new StringBuilder("[");
    int i = 0;
    for (Abstraction.Pair p : Abstraction.pairs(results)) {
      b.append(i++ == 0 ? "\n    " : ",\n    ")
          .append(
              String.format(
                  Locale.ROOT,
                  "{\"engine\": %s, \"scenario\": %s, \"phase\": %s, \"threads\": %d,"
                      + " \"durability\": %s, \"kv4jOpsPerSec\": %.1f, \"rawOpsPerSec\": %.1f,"
                      + " \"ratio\": %.3f}",
                  Format.str(p.engine()),
                  Format.str(p.kv4j().scenario()),
                  Format.str(p.kv4j().phase()),
                  p.kv4j().threads(),
                  Format.str(p.kv4j().durability().name()),
                  p.kv4j().opsPerSec(),
                  p.raw().opsPerSec(),
                  p.ratio()));
    }
    return b.append(i == 0 ? "]" : "\n  ]").toString();
  }

  /**
   * The disk pairs as a JSON array.
   *
   * @param results every row
   * @return the array
   */
  static String diskJson(List<Result> results) {
    StringBuilder b = new StringBuilder("[");
    int i = 0;
    for (Abstraction.DiskPair p : Abstraction.diskPairs(results)) {
      b.append(i++ == 0 ? "\n    " : ",\n    ")
          .append(
              String.format(
                  Locale.ROOT,
                  "{\"engine\": %s, \"phase\": %s, \"durability\": %s, \"kv4jWrites\": %.0f,"
                      + " \"rawWrites\": %.0f, \"kv4jAllocatedBytes\": %d, \"rawAllocatedBytes\":"
                      + " %d, \"allocatedRatio\": %.3f, \"kv4jApparentBytes\": %.0f,"
                      + " \"rawApparentBytes\": %.0f, \"apparentRatio\": %.3f}",
                  Format.str(p.engine()),
                  Format.str(p.kv4j().phase()),
                  Format.str(p.kv4j().durability().name()),
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
