package io.kv4j.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The cost of the abstraction: each kv4j adapter engine (rocksdb, lmdb, sqlite) against the same
 * library used directly with the same settings ({@code <engine>-raw}, in {@code
 * io.kv4j.bench.raw}), as the ratio of throughputs kv4j / raw per scenario, thread count and
 * durability. Goal: at least {@value #GOAL}.
 */
final class Abstraction {
  static final double GOAL = 0.9;
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
    if (pairs.isEmpty()) {
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
}
