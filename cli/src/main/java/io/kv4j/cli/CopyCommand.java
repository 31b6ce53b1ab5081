package io.kv4j.cli;

import io.kv4j.Cursor;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreCopy;
import io.kv4j.spi.OptionSpec;
import java.io.PrintWriter;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Copies every entry of one store into another. */
@Command(
    name = "copy",
    mixinStandardHelpOptions = true,
    description = {
      "Copy every entry from one store to another, whatever the engines, in key order and in"
          + " batches, with a progress bar on standard error. Ends by comparing the entry counts"
          + " and SHA-256 checksums of both stores (exit code 6 if they differ).",
      "An interrupted copy (Ctrl-C, kill, crash) leaves a prefix of the source in the target:"
          + " run the same command with --resume to continue from the target's highest key.",
      "The target is written with durability=buffered unless its URI says otherwise, and synced"
          + " once at the end."
    })
final class CopyCommand implements Runnable {
  private static final OptionSpec<Long> BATCH_BYTES =
      OptionSpec.size("batch-bytes", 4L << 20, 1, 1L << 30, "batch payload");

  @Spec CommandSpec spec;

  @Option(
      names = "--from",
      required = true,
      paramLabel = "URI",
      description = "The source store, opened read-only.")
  String from;

  @Option(
      names = "--to",
      required = true,
      paramLabel = "URI",
      description = "The target store, created if missing.")
  String to;

  @Option(names = "--resume", description = "Continue an interrupted copy into a non-empty target.")
  boolean resume;

  @Option(
      names = "--batch",
      paramLabel = "N",
      defaultValue = "1000",
      description = "Entries per batch (default: ${DEFAULT-VALUE}).")
  int batch;

  @Option(
      names = "--batch-bytes",
      paramLabel = "SIZE",
      defaultValue = "4MiB",
      description =
          "Write a batch once its keys and values reach SIZE (default: ${DEFAULT-VALUE}).")
  String batchBytes;

  @Option(names = "--no-verify", description = "Skip the final count and checksum comparison.")
  boolean noVerify;

  @Option(names = "--no-progress", description = "Do not show progress.")
  boolean noProgress;

  @Option(
      names = "--progress-interval",
      paramLabel = "MS",
      description =
          "Milliseconds between progress updates (default: 200 on a terminal, 1000 otherwise).")
  Long progressInterval;

  @Override
  public void run() {
    PrintWriter err = spec.commandLine().getErr();
    Interrupt interrupt = new Interrupt();
    StoreCopy.Options options = options(err, interrupt);
    Thread hook = new Thread(interrupt::awaitStop, "kv4j-copy-interrupt");
    Runtime.getRuntime().addShutdownHook(hook);
    StoreCopy.Result r;
    try {
      r = copy(err, options);
    } catch (CancellationException e) {
      err.println(
          "\ninterrupted: the target holds a prefix of the source; run the same command with"
              + " --resume to continue");
      err.flush();
      interrupt.stopped.countDown();
      throw new CliException(ExitCode.IO, "copy interrupted");
    } finally {
      interrupt.stopped.countDown();
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException shuttingDown) {
        // The JVM is exiting; the hook has run or is running.
      }
    }
    print(spec.commandLine().getOut(), r);
  }

  /** The copy's options from the command line; misuse is a usage error before anything opens. */
  private StoreCopy.Options options(PrintWriter err, Interrupt interrupt) {
    if (batch < 1) {
      throw new CliException(ExitCode.USAGE, "--batch must be >= 1, got " + batch);
    }
    long maxBytes;
    try {
      maxBytes = BATCH_BYTES.parse(batchBytes);
    } catch (IllegalArgumentException e) {
      throw new CliException(ExitCode.USAGE, "--batch-bytes: " + e.getMessage());
    }
    boolean terminal = System.console() != null;
    ProgressBar bar =
        new ProgressBar(
            err, terminal, progressInterval != null ? progressInterval : terminal ? 200 : 1000);
    return StoreCopy.Options.defaults()
        .batchEntries(batch)
        .batchBytes(maxBytes)
        .resume(resume)
        .verify(!noVerify)
        .listener(
            p -> {
              interrupt.check();
              if (!noProgress) {
                bar.progress(p);
              }
            });
  }

  private StoreCopy.Result copy(PrintWriter err, StoreCopy.Options options) {
    try (Store source = Uris.open(from, Uris.Mode.READ);
        Store target = Uris.open(to, Uris.Mode.COPY_TARGET)) {
      if (!resume && !isEmpty(target)) {
        throw new CliException(
            ExitCode.USAGE,
            "target "
                + target.info().describe()
                + " is not empty; add --resume to continue an interrupted copy into it");
      }
      err.println("copying " + source.info().describe() + " -> " + target.info().describe());
      err.flush();
      return StoreCopy.copy(source, target, options);
    }
  }

  /** What was copied, and the verification's verdict (a failed one is exit code CHECK_FAILED). */
  private void print(PrintWriter out, StoreCopy.Result r) {
    if (r.resumedFrom() != null) {
      out.println(
          "resumed after "
              + Format.count(r.skippedEntries())
              + " entries already in the target, from key "
              + new Codec().format(r.resumedFrom()));
    }
    double secs = r.elapsedNanos() / 1e9;
    out.printf(
        java.util.Locale.ROOT,
        "copied %s entries (%s) in %.2f s%n",
        Format.count(r.copiedEntries()),
        Format.bytes(r.copiedBytes()),
        secs);
    if (noVerify) {
      out.println("not verified (--no-verify)");
      return;
    }
    out.println("source: " + describe(r.source()));
    out.println("target: " + describe(r.target()));
    if (!r.verified()) {
      out.println("verification FAILED: the target does not hold exactly the source's entries");
      out.flush();
      throw new CliException(
          ExitCode.CHECK_FAILED,
          "copy verification failed: source and target differ (counts or checksums)");
    }
    out.println("verified: same entry count and checksum on both sides");
  }

  private static boolean isEmpty(Store store) {
    try (Cursor c = store.scan(KeyRange.all().limit(1))) {
      return !c.hasNext();
    }
  }

  private static String describe(StoreCopy.Checksum c) {
    return Format.count(c.entries())
        + " entries, "
        + Format.bytes(c.bytes())
        + ", sha256 "
        + c.sha256();
  }

  /** Stops the copy between batches when the JVM is asked to exit (Ctrl-C, SIGTERM). */
  private static final class Interrupt {
    private volatile boolean requested;
    final CountDownLatch stopped = new CountDownLatch(1);

    void check() {
      if (requested) {
        throw new CancellationException("interrupted");
      }
    }

    void awaitStop() {
      requested = true;
      try {
        stopped.await(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
