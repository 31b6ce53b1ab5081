package io.kv4j.cli;

import io.kv4j.DamagedRegion;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCopy;
import java.io.PrintWriter;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** Writes every intact entry of a damaged store into a new store and says what was lost. */
@Command(
    name = "salvage",
    mixinStandardHelpOptions = true,
    description = {
      "Read every intact entry of a damaged store, without the checks that make a normal open"
          + " refuse it, and write them into a new store of any engine. Prints every damaged"
          + " region stepped over (file, offset, what it held) and what was lost.",
      "SRC is only read: nothing in its directory is written or created. DST must be empty or"
          + " absent. Exit code 0: SRC was intact and everything is in DST; 3: SRC had damage and"
          + " every intact entry is in DST, the regions listed were lost.",
      "Salvage cannot know what a damaged region held: a deletion lost in one may bring back the"
          + " value it deleted. Check DST before replacing SRC with it."
    })
final class SalvageCommand implements Runnable {
  private static final int MAX_SHOWN = 100;

  @Spec CommandSpec spec;

  @Parameters(
      index = "0",
      paramLabel = "SRC",
      description = "The damaged store, e.g. hashlog:/data/app.")
  String from;

  @Parameters(index = "1", paramLabel = "DST", description = "The new store, created if missing.")
  String to;

  @Option(
      names = "--batch",
      paramLabel = "N",
      defaultValue = "1000",
      description = "Entries per batch written to DST (default: ${DEFAULT-VALUE}).")
  int batch;

  @Override
  public void run() {
    if (batch < 1) {
      throw new CliException(ExitCode.USAGE, "--batch must be >= 1, got " + batch);
    }
    StoreConfig source = Uris.parse(from);
    if (sameLocation(source, Uris.parse(to))) {
      throw new CliException(ExitCode.USAGE, "SRC and DST are the same store: " + from);
    }
    PrintWriter out = spec.commandLine().getOut();
    StoreCopy.Salvaged r;
    try (Store target = Uris.open(to, Uris.Mode.COPY_TARGET)) {
      out.println("salvaging " + from + " into " + target.info().describe());
      out.flush();
      try {
        r = StoreCopy.salvage(source, target, StoreCopy.Options.defaults().batchEntries(batch));
      } catch (IllegalStateException notEmpty) {
        throw new CliException(ExitCode.USAGE, "DST " + to + ": " + notEmpty.getMessage());
      }
    }
    print(out, r);
  }

  private static boolean sameLocation(StoreConfig a, StoreConfig b) {
    return a.path() != null
        && b.path() != null
        && a.path().toAbsolutePath().normalize().equals(b.path().toAbsolutePath().normalize());
  }

  private void print(PrintWriter out, StoreCopy.Salvaged r) {
    List<DamagedRegion> damage = r.damage();
    for (int i = 0; i < Math.min(MAX_SHOWN, damage.size()); i++) {
      out.println("LOST " + damage.get(i).describe());
    }
    if (damage.size() > MAX_SHOWN) {
      out.println("... and " + (damage.size() - MAX_SHOWN) + " more damaged regions");
    }
    long lost = damage.stream().mapToLong(DamagedRegion::lostEntries).filter(n -> n >= 0).sum();
    boolean counted = damage.stream().allMatch(d -> d.lostEntries() >= 0);
    out.println(
        (damage.isEmpty() ? "OK: " : "DAMAGED: ")
            + Format.count(r.entries())
            + " entries ("
            + Format.bytes(r.bytes())
            + " of keys and values) written to "
            + to
            + (r.keyspaces().isEmpty() ? "" : ", keyspaces " + String.join(", ", r.keyspaces()))
            + " in "
            + Format.seconds(r.elapsedNanos())
            + (damage.isEmpty()
                ? "; no damage found"
                : "; "
                    + damage.size()
                    + " damaged region(s), "
                    + (counted ? Format.count(lost) : "at least " + Format.count(lost))
                    + " entries lost"));
    out.flush();
    if (!damage.isEmpty()) {
      throw new CliException(
          ExitCode.CORRUPT, "salvage of " + from + " lost " + damage.size() + " damaged region(s)");
    }
  }
}
