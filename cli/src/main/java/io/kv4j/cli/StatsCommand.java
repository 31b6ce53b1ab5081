package io.kv4j.cli;

import io.kv4j.Store;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** Prints a store's description and figures. */
@Command(
    name = "stats",
    mixinStandardHelpOptions = true,
    description = "Print a store's engine, features, key count, size on disk and engine figures.")
final class StatsCommand implements Runnable {
  @Spec CommandSpec spec;

  @Parameters(index = "0", paramLabel = "URI", description = "The store, e.g. hashlog:/data/app.")
  String uri;

  @Override
  public void run() {
    PrintWriter out = spec.commandLine().getOut();
    try (Store store = Uris.open(uri, Uris.Mode.READ)) {
      StoreInfo info = store.info();
      StoreStats s = store.stats();
      row(out, "engine", info.engine());
      row(out, "location", info.location());
      row(
          out,
          "features",
          info.features().stream()
              .map(f -> f.name().toLowerCase(Locale.ROOT).replace('_', '-'))
              .collect(Collectors.joining(", ")));
      row(
          out,
          "limits",
          "keys 1.."
              + info.limits().maxKeySize()
              + " B, values 0.."
              + Format.bytes(info.limits().maxValueSize()));
      row(
          out,
          "health",
          s.health().name().toLowerCase(Locale.ROOT)
              + (s.problem() == null ? "" : ": " + Main.oneLine(s.problem())));
      row(out, "keys", Format.count(s.keyCount()) + (s.keyCountExact() ? "" : " (estimate)"));
      row(out, "disk", Format.bytes(s.diskBytes()) + " (" + s.diskBytes() + " bytes)");
      for (Map.Entry<String, Number> f : s.figures().entrySet()) {
        row(out, f.getKey(), Format.number(f.getValue()));
      }
    }
  }

  private static void row(PrintWriter out, String name, String value) {
    out.printf(Locale.ROOT, "%-28s %s%n", name, value);
  }
}
