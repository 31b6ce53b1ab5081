package io.kv4j.cli;

import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.StoreCopy;
import io.kv4j.StoreStats;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** Runs {@link Store#backup(Path)}: a consistent, openable copy in a new directory. */
@Command(
    name = "backup",
    mixinStandardHelpOptions = true,
    description = {
      "Write a consistent copy of a store to a new directory with the engine's own backup"
          + " (RocksDB checkpoint, LMDB copy, SQLite online backup, hashlog segment copy), for"
          + " engines that declare BACKUP. The copy opens with the same engine and options:"
          + " ENGINE:DIR. DIR must not exist or be empty; it appears complete or not at all.",
      "The store is opened read-only. For engines without BACKUP (server engines: use the"
          + " server's own tools), 'kv4j copy' makes a copy into any engine."
    })
final class BackupCommand implements Runnable {
  @Spec CommandSpec spec;

  @Parameters(index = "0", paramLabel = "URI", description = "The store, e.g. rocksdb:/data/app.")
  String uri;

  @Parameters(index = "1", paramLabel = "DIR", description = "The directory to create.")
  Path target;

  @Option(
      names = "--verify",
      description = "Open the copy afterwards and compare checksums of both (reads both fully).")
  boolean verify;

  @Override
  public void run() {
    PrintWriter out = spec.commandLine().getOut();
    try (Store store = Uris.open(uri, Uris.Mode.READ)) {
      if (!store.info().has(Feature.BACKUP)) {
        throw new CliException(
            ExitCode.USAGE,
            "engine '"
                + store.info().engine()
                + "' does not support BACKUP; use 'kv4j copy "
                + uri
                + " <engine>:"
                + target
                + "' instead");
      }
      long start = System.nanoTime();
      store.backup(target);
      long took = System.nanoTime() - start;
      StoreStats stats = store.stats();
      row(out, "engine", store.info().engine());
      row(out, "from", store.info().location());
      row(out, "to", target.toAbsolutePath().normalize().toString());
      row(out, "keys", (stats.keyCountExact() ? "" : "~") + Format.number(stats.keyCount()));
      row(out, "time", Format.seconds(took));
      if (verify) {
        String copyUri = store.info().engine() + ":" + target.toAbsolutePath().normalize();
        try (Store copy = Uris.open(copyUri, Uris.Mode.READ)) {
          copy.verify();
          StoreCopy.Checksum a = StoreCopy.checksum(store);
          StoreCopy.Checksum b = StoreCopy.checksum(copy);
          if (!a.equals(b)) {
            throw new CliException(
                ExitCode.CHECK_FAILED, "the backup differs from the store: " + a + " vs " + b);
          }
          row(out, "verified", "checksums equal (" + a + ")");
        }
      }
    }
  }

  private static void row(PrintWriter out, String name, String value) {
    out.printf(Locale.ROOT, "%-10s %s%n", name, value);
  }
}
