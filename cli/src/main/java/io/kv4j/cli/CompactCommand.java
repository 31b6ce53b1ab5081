package io.kv4j.cli;

import io.kv4j.Store;
import java.io.PrintWriter;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** Runs {@link Store#compact()} and reports the bytes on disk before and after. */
@Command(
    name = "compact",
    mixinStandardHelpOptions = true,
    description = {
      "Reclaim disk space now: the engine compacts its files (rocksdb merges its levels, sqlite"
          + " vacuums and empties its WAL, engines with nothing to do return at once; each"
          + " engine's README says what it does). Data and order are unaffected.",
      "Prints the bytes on disk before and after, from the store's stats."
    })
final class CompactCommand implements Runnable {
  @Spec CommandSpec spec;

  @Parameters(index = "0", paramLabel = "URI", description = "The store, e.g. sqlite:/data/app.")
  String uri;

  @Override
  public void run() {
    PrintWriter out = spec.commandLine().getOut();
    try (Store store = Uris.open(uri, Uris.Mode.WRITE)) {
      long before = store.stats().diskBytes();
      long start = System.nanoTime();
      store.compact();
      long took = System.nanoTime() - start;
      long after = store.stats().diskBytes();
      row(out, "engine", store.info().engine());
      row(out, "location", store.info().location());
      row(out, "disk before", size(before));
      row(out, "disk after", size(after));
      row(out, after <= before ? "reclaimed" : "grew", change(before, after));
      row(out, "time", Format.seconds(took));
    }
  }

  /**
   * How much the files shrank or grew, and that as a share of their size before: "3.0 MiB (73.9% of
   * 4.0 MiB)" reclaimed, "356 B (+65.0%)" grew; the row's name says which.
   */
  static String change(long before, long after) {
    long delta = Math.abs(before - after);
    if (before <= 0) {
      return Format.bytes(delta);
    }
    double percent = 100.0 * delta / before;
    return after <= before
        ? String.format(
            Locale.ROOT, "%s (%.1f%% of %s)", Format.bytes(delta), percent, Format.bytes(before))
        : String.format(Locale.ROOT, "%s (+%.1f%%)", Format.bytes(delta), percent);
  }

  private static String size(long bytes) {
    return Format.bytes(bytes) + " (" + bytes + " bytes)";
  }

  private static void row(PrintWriter out, String name, String value) {
    out.printf(Locale.ROOT, "%-12s %s%n", name, value);
  }
}
