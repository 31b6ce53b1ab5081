package io.kv4j.cli;

import io.kv4j.Cursor;
import io.kv4j.DamagedRegion;
import io.kv4j.Entry;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.ReadView;
import io.kv4j.Snapshot;
import io.kv4j.Store;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreStats;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** Reads every record and reports corruption. */
@Command(
    name = "verify",
    mixinStandardHelpOptions = true,
    description = {
      "Read every record: one full scan, and a get of every key it returns, so the engine checks"
          + " each record's checksum where it keeps one. Reports corrupt records with their file"
          + " and offset and exits with 3.",
      "When a scan stops at a corrupt record, the rest is read with a reverse scan from the end."
    })
final class VerifyCommand implements Runnable {
  private static final int MAX_SHOWN = 100;

  @Spec CommandSpec spec;

  @Mixin Codec codec;

  @Parameters(index = "0", paramLabel = "URI", description = "The store, e.g. hashlog:/data/app.")
  String uri;

  private final List<String> problems = new ArrayList<>();
  private final List<StoreCorruptedException> corrupt = new ArrayList<>();
  private final List<String> notes = new ArrayList<>();
  private long entries;
  private long changed; // keys written between the scan and the get (no snapshot)
  private long bytes;
  private boolean filesChecked;

  @Override
  public void run() {
    PrintWriter out = spec.commandLine().getOut();
    long start = System.nanoTime();
    String gap = null;
    try (Store store = Uris.open(uri, Uris.Mode.READ)) {
      out.println("verifying " + store.info().describe());
      out.flush();
      long countBefore = store.stats().keyCount();
      byte[] last = null;
      boolean complete = true;
      // A store another process writes (lmdb, sqlite and rocksdb readers, server engines) changes
      // under a plain scan: where the engine has snapshots, the scan and the gets read one.
      try (Snapshot snapshot = store.info().has(Feature.SNAPSHOT_READ) ? store.snapshot() : null) {
        Reads reads = new Reads(snapshot == null ? store : snapshot, snapshot != null);
        try (Cursor c = reads.view().scan(KeyRange.all())) {
          while (c.hasNext()) {
            Entry e = c.next();
            check(reads, e);
            last = e.key();
          }
        } catch (StoreCorruptedException x) {
          corrupt(x);
          complete = false;
        }
        if (!complete) {
          gap = readBackwards(store, reads, last);
        }
      }
      // What a scan does not read: file-level checksums and structure (RocksDB tables and WAL,
      // SQLite's integrity check, LMDB's meta pages, hashlog's segment chain and hints).
      try {
        store.verify();
        filesChecked = true;
      } catch (StoreCorruptedException x) {
        corrupt(x);
      }
      checkStats(store, store.stats(), countBefore, complete);
    }
    print(out, gap, start);
  }

  /**
   * How this verify reads: a scan and a get over one snapshot ({@code consistent}), or over the
   * live store.
   */
  private record Reads(ReadView view, boolean consistent) {}

  /**
   * Notes what the engine dropped at open, and a key count that disagrees with the scan. A store
   * another process writes changes its count while it is scanned, also back to where it was; so a
   * disagreement counts only if it stays when the keys are counted again, {@link #RECOUNTS} times,
   * each time with the engine's count the same before and after.
   */
  private void checkStats(Store store, StoreStats s, long countBefore, boolean complete) {
    for (var f : s.figures().entrySet()) {
      String n = f.getKey();
      if ((n.contains("truncated") || n.contains("corrupt") || n.contains("discarded"))
          && f.getValue().doubleValue() > 0) {
        notes.add(
            n
                + " = "
                + f.getValue()
                + ": the engine dropped data when it opened the store (a torn write after a"
                + " crash, or damage it cannot tell apart from one)");
      }
    }
    if (s.keyCount() != countBefore) {
      notes.add(
          "the store was written while it was verified (its key count went from "
              + countBefore
              + " to "
              + s.keyCount()
              + "): the count was not compared with the scan");
    } else if (complete && s.keyCountExact() && s.keyCount() != entries && countStaysWrong(store)) {
      problems.add(
          "the engine counts " + s.keyCount() + " keys but a full scan returned " + entries);
    }
  }

  private static final int RECOUNTS = 3;

  /** Whether the engine's key count and a scan's disagree every time, with no write between. */
  private boolean countStaysWrong(Store store) {
    for (int i = 0; i < RECOUNTS; i++) {
      long before = store.stats().keyCount();
      long scanned = 0;
      try (Cursor c = store.scan(KeyRange.all())) {
        while (c.hasNext()) {
          c.next();
          scanned++;
        }
      }
      long after = store.stats().keyCount();
      if (before != after || before == scanned) {
        if (before != after) {
          notes.add(
              "the store was written while its keys were counted: the count was not compared");
        }
        return false;
      }
    }
    return true;
  }

  /** Prints the findings and the verdict; any finding is exit code CORRUPT. */
  private void print(PrintWriter out, String gap, long start) {
    for (StoreCorruptedException x : corrupt) {
      if (x.damage().size() > 1) {
        // The engine's check found several damaged regions: one line each.
        for (DamagedRegion d : x.damage()) {
          out.println("CORRUPT " + Main.oneLine(d.describe()));
        }
      } else {
        out.println("CORRUPT " + where(x) + ": " + Main.oneLine(x.getMessage()));
      }
    }
    for (int i = 0; i < Math.min(MAX_SHOWN, problems.size()); i++) {
      out.println("PROBLEM " + problems.get(i));
    }
    if (problems.size() > MAX_SHOWN) {
      out.println("... and " + (problems.size() - MAX_SHOWN) + " more problems");
    }
    if (gap != null) {
      out.println("UNREADABLE " + gap);
    }
    if (changed > 0) {
      notes.add(
          Format.count(changed)
              + " key(s) changed between the scan and the get (the store was written meanwhile;"
              + " the engine has no snapshots to read one point in time)");
    }
    for (String n : notes) {
      out.println("NOTE " + n);
    }
    int found =
        corrupt.stream().mapToInt(x -> Math.max(1, x.damage().size())).sum() + problems.size();
    out.println(
        (found == 0 ? "OK: " : "FAILED: ")
            + Format.count(entries)
            + " entries ("
            + Format.bytes(bytes)
            + " of keys and values) read by scan and get"
            + (filesChecked ? ", the engine's files checked," : "")
            + " in "
            + Format.seconds(System.nanoTime() - start)
            + (found == 0 ? ", no corruption found" : ", " + found + " problem(s) found"));
    out.flush();
    if (found > 0) {
      throw new CliException(ExitCode.CORRUPT, "verify found " + found + " problem(s) in " + uri);
    }
  }

  /** Reads from the end down to {@code last} after a forward scan stopped at corrupt data. */
  private String readBackwards(Store store, Reads reads, byte[] last) {
    String after = last == null ? "the first key" : "key " + codec.format(last);
    if (!store.info().has(Feature.REVERSE_SCAN)) {
      return "entries after " + after + " (the engine cannot scan in reverse)";
    }
    KeyRange r = last == null ? KeyRange.all().reverse() : KeyRange.all().gt(last).reverse();
    byte[] lowest = null;
    try (Cursor c = reads.view().scan(r)) {
      while (c.hasNext()) {
        Entry e = c.next();
        check(reads, e);
        lowest = e.key();
      }
      return null; // the reverse scan read everything the forward scan could not
    } catch (StoreCorruptedException x) {
      corrupt(x);
    }
    return "entries after "
        + after
        + (lowest == null ? "" : " and before key " + codec.format(lowest))
        + " (the scans stop at the corrupt record)";
  }

  private void check(Reads reads, Entry e) {
    entries++;
    bytes += e.key().length + e.value().length;
    byte[] v;
    try {
      v = reads.view().get(e.key());
      if (!reads.consistent && !Arrays.equals(v, e.value())) {
        // Read apart in time: a second get that differs from the first, or that matches the scan,
        // shows a write in between, not damage.
        byte[] again = reads.view().get(e.key());
        if (!Arrays.equals(again, v) || Arrays.equals(again, e.value())) {
          changed++;
          return;
        }
      }
    } catch (StoreCorruptedException x) {
      corrupt(x);
      return;
    }
    if (v == null) {
      problems.add("key " + codec.format(e.key()) + " is returned by scan but not by get");
    } else if (!Arrays.equals(v, e.value())) {
      problems.add("key " + codec.format(e.key()) + " has different values in scan and get");
    }
  }

  private void corrupt(StoreCorruptedException x) {
    for (StoreCorruptedException c : corrupt) {
      if (c.offset() == x.offset()
          && java.util.Objects.equals(c.file(), x.file())
          && java.util.Objects.equals(c.getMessage(), x.getMessage())) {
        return;
      }
    }
    corrupt.add(x);
  }

  private static String where(StoreCorruptedException x) {
    if (x.file() == null) {
      return "(location unknown)";
    }
    return x.file() + (x.offset() >= 0 ? " offset " + x.offset() : "");
  }
}
