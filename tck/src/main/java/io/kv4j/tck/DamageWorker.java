package io.kv4j.tck;

import io.kv4j.Cursor;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreException;
import io.kv4j.WriteBatch;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;

/**
 * The child JVM of the damage rules (group 12), and the data set they damage.
 *
 * <p>The parent writes the data set ({@link #write}) with durability SYNC, closes the store, copies
 * the directory once per case and damages one file of each copy. It then starts this class with a
 * case file (one case per line: {@code <n> TAB <kind> TAB <file> TAB <config URI>}) and the data
 * set's seed. For each case in turn the child prints {@code case <n> <file> <kind>}, opens the
 * damaged copy read-write and checks it against the data set, then prints one result line:
 *
 * <ul>
 *   <li>{@code result <n> open-failed <exception class> <message>} — the open threw a {@link
 *       StoreException}; the parent then checks that no file was deleted or shortened;
 *   <li>{@code result <n> opened <summary>} — the store opened and kept the contract;
 *   <li>{@code result <n> violation <what>} — the store opened and broke the contract, or the
 *       engine threw something other than a {@link StoreException}.
 * </ul>
 *
 * <p>Messages are on one line (line breaks become {@code \n}). A child that dies mid-case (a native
 * crash such as SIGBUS, {@code halt}, a hang the parent kills) leaves the last {@code case} line
 * without its result, which the parent names in the failure.
 */
public final class DamageWorker {
  /** Keys in the data set. */
  static final int KEYS = 2000;

  /** The kind of the case that replaces the directory's contents with a foreign store. */
  static final String FOREIGN = "foreign";

  private DamageWorker() {}

  /**
   * Entry point.
   *
   * @param args the case file, the data set's seed
   * @throws IOException if the case file cannot be read
   */
  public static void main(String[] args) throws IOException {
    List<String> cases = Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8);
    long seed = Long.parseLong(args[1]);
    DataSet data = DataSet.of(seed);
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    for (String line : cases) {
      if (line.isBlank()) {
        continue;
      }
      String[] f = line.split("\t", 4);
      out.println("case " + f[0] + " " + f[2] + " " + f[1]);
      out.flush();
      String result;
      try {
        result = runCase(f[3], f[1], data);
      } catch (Throwable t) {
        // Anything escaping runCase is the engine's (runCase catches what the contract allows).
        result = "violation the engine threw " + describe(t);
      }
      out.println("result " + f[0] + " " + oneLine(result));
      out.flush();
    }
    out.println("done");
    out.flush();
  }

  /** Opens one damaged copy and checks it; returns the result line's status and detail. */
  private static String runCase(String uri, String kind, DataSet data) {
    Store s;
    try {
      s = GivenEngine.open(uri);
    } catch (StoreException e) {
      return "open-failed " + e.getClass().getName() + " " + e.getMessage();
    } catch (Throwable t) {
      return "violation the open threw " + describe(t) + " instead of a StoreException";
    }
    String verdict;
    try {
      verdict = kind.equals(FOREIGN) ? "opened the foreign store" : check(s, data);
    } finally {
      try {
        s.close();
      } catch (StoreException e) {
        // A damaged store may fail to close cleanly; reporting it is allowed.
      }
    }
    return verdict;
  }

  /**
   * The contract for a store that opened on damaged files: every key reads its value or throws
   * {@link StoreCorruptedException}; a deleted key never reads a value; a key reads null (or is
   * missing from a full scan that completed) only if that scan or {@link Store#verify()} reports
   * corruption; a scan never returns a wrong value or a key that is not live.
   */
  private static String check(Store s, DataSet data) {
    Inspection inspection = new Inspection(s, data);
    String violation = inspection.readEveryKey();
    if (violation == null) {
      violation = inspection.scanEverything();
    }
    if (violation == null) {
      violation = inspection.verify();
    }
    return violation != null ? violation : inspection.verdict();
  }

  /**
   * One {@link #check}: its steps, each answering a violation or null, and what they found. The
   * steps run in order, each only if the ones before found no violation.
   */
  private static final class Inspection {
    private final Store s;
    private final DataSet data;
    private int exact;
    private int reported;
    private final Set<String> lost = new java.util.TreeSet<>();
    private boolean scanReported;
    private boolean verifyReported;

    Inspection(Store s, DataSet data) {
      this.s = s;
      this.data = data;
    }

    /** Every key of the data set, deleted ones included, read with a get. */
    String readEveryKey() {
      for (byte[] k : data.allKeys) {
        byte[] v;
        try {
          v = s.get(k);
        } catch (StoreCorruptedException e) {
          reported++;
          continue;
        } catch (RuntimeException e) {
          return "violation get of key " + name(k) + " threw " + notCorrupted(e);
        }
        byte[] want = data.live.get(k);
        if (want == null) {
          if (v != null) {
            return "violation deleted key "
                + name(k)
                + " reads a value ("
                + v.length
                + " bytes): a deleted key came back";
          }
        } else if (v == null) {
          lost.add(name(k));
        } else if (!Arrays.equals(v, want)) {
          return "violation key "
              + name(k)
              + " reads a wrong value: "
              + data.difference(k, v, want);
        } else {
          exact++;
        }
      }
      return null;
    }

    /** A full scan: only live keys with their values; a live key it misses is lost. */
    String scanEverything() {
      Set<String> seen = new HashSet<>();
      // An engine without ORDERED_SCAN may refuse scans (AbstractStore does): then only verify()
      // can report a loss.
      boolean canScan = s.info().has(io.kv4j.Feature.ORDERED_SCAN);
      try (Cursor c = canScan ? s.scan(KeyRange.all()) : null) {
        while (c != null && c.hasNext()) {
          Entry e = c.next();
          byte[] want = data.live.get(e.key());
          if (want == null) {
            return "violation a full scan returned key "
                + name(e.key())
                + ", which "
                + (data.deleted.contains(name(e.key())) ? "was deleted" : "was never written");
          }
          if (!Arrays.equals(e.value(), want)) {
            return "violation a full scan returned a wrong value for key "
                + name(e.key())
                + ": "
                + data.difference(e.key(), e.value(), want);
          }
          seen.add(name(e.key()));
        }
      } catch (StoreCorruptedException e) {
        scanReported = true;
      } catch (RuntimeException e) {
        return "violation a full scan threw " + notCorrupted(e);
      }
      if (!scanReported && canScan) {
        for (byte[] k : data.live.keySet()) {
          if (!seen.contains(name(k))) {
            lost.add(name(k));
          }
        }
      }
      return null;
    }

    /** {@link Store#verify()}: it passes or throws {@link StoreCorruptedException}. */
    String verify() {
      try {
        s.verify();
      } catch (StoreCorruptedException e) {
        verifyReported = true;
      } catch (RuntimeException e) {
        return "violation verify() threw " + notCorrupted(e);
      }
      return null;
    }

    /** After the steps: a violation if a key was lost silently, else the summary. */
    String verdict() {
      if (!lost.isEmpty() && !scanReported && !verifyReported) {
        return "violation key "
            + lost.iterator().next()
            + " is silently lost ("
            + lost.size()
            + " live keys read null or are missing from a full scan, and neither the scan nor"
            + " verify() threw StoreCorruptedException)";
      }
      return "opened "
          + exact
          + " keys exact, "
          + reported
          + " reported corrupt, "
          + lost.size()
          + " lost and reported by "
          + (lost.isEmpty() ? "-" : scanReported ? "the scan" : "verify()");
    }
  }

  private static String notCorrupted(RuntimeException e) {
    return describe(e) + " (damage must be reported as StoreCorruptedException)";
  }

  private static String describe(Throwable t) {
    return t.getClass().getName() + ": " + t.getMessage();
  }

  static String oneLine(String s) {
    return s.replace("\r", "\\r").replace("\n", "\\n");
  }

  /** A data set key as the failure messages name it. */
  static String name(byte[] key) {
    return new String(key, StandardCharsets.UTF_8);
  }

  static byte[] key(int i) {
    return String.format("d/%05d", i).getBytes(StandardCharsets.UTF_8);
  }

  /** Value {@code version} of key {@code i}: empty, 64 KiB or 1-300 random bytes. */
  static byte[] value(long seed, int i, int version) {
    SplittableRandom r = new SplittableRandom(seed * 1_000_003L + i * 31L + version);
    int len = i % 97 == 5 ? 0 : i % 331 == 7 ? 65536 : r.nextInt(1, 301);
    byte[] v = new byte[len];
    r.nextBytes(v);
    return v;
  }

  /**
   * Writes the data set: {@link #KEYS} puts, an overwrite of every third key, a delete of every
   * seventh, a re-put of every 49th after its delete. The first ops of each phase are single puts
   * and deletes; the rest go in batches of 100 when the engine has them (fewer SYNC round trips).
   */
  static void write(Store s, long seed, boolean batches) {
    List<Op> ops = ops(seed);
    WriteBatch b = new WriteBatch();
    for (Op op : ops) {
      if (!batches || op.single) {
        if (op.value == null) {
          s.delete(op.key);
        } else {
          s.put(op.key, op.value);
        }
        continue;
      }
      if (op.value == null) {
        b.delete(op.key);
      } else {
        b.put(op.key, op.value);
      }
      if (b.size() == 100) {
        s.write(b);
        b = new WriteBatch();
      }
    }
    if (!b.isEmpty()) {
      s.write(b);
    }
  }

  private record Op(byte[] key, byte[] value, boolean single) {}

  private static List<Op> ops(long seed) {
    List<Op> ops = new ArrayList<>();
    for (int i = 0; i < KEYS; i++) {
      ops.add(new Op(key(i), value(seed, i, 0), i < 60));
    }
    for (int i = 0; i < KEYS; i += 3) {
      ops.add(new Op(key(i), value(seed, i, 1), i < 90));
    }
    for (int i = 0; i < KEYS; i += 7) {
      ops.add(new Op(key(i), null, i < 140));
    }
    for (int i = 0; i < KEYS; i += 49) {
      ops.add(new Op(key(i), value(seed, i, 2), i < 150));
    }
    return ops;
  }

  /** What the store must hold after {@link #write}: live keys with values, deleted keys. */
  static final class DataSet {
    final TreeMap<byte[], byte[]> live = new TreeMap<>(Arrays::compareUnsigned);
    final Set<String> deleted = new HashSet<>();
    final List<byte[]> allKeys = new ArrayList<>();

    private long seed;

    /** How a wrong value differs from the right one; an older value is named as such. */
    String difference(byte[] key, byte[] got, byte[] want) {
      String n = name(key);
      if (n.startsWith("d/")) {
        int i = Integer.parseInt(n.substring(2));
        for (int version = 0; version < 3; version++) {
          if (Arrays.equals(got, value(seed, i, version)) && !Arrays.equals(got, want)) {
            return "an older value (written before a later acknowledged write that was lost)";
          }
        }
      }
      if (got.length != want.length) {
        return got.length + " bytes instead of " + want.length;
      }
      return want.length + " bytes, first differing at byte " + Arrays.mismatch(got, want);
    }

    static DataSet of(long seed) {
      DataSet d = new DataSet();
      d.seed = seed;
      Map<String, byte[]> byName = new HashMap<>();
      for (Op op : ops(seed)) {
        byName.put(name(op.key), op.key);
        if (op.value == null) {
          d.live.remove(op.key);
          d.deleted.add(name(op.key));
        } else {
          d.live.put(op.key, op.value);
          d.deleted.remove(name(op.key));
        }
      }
      d.allKeys.addAll(byName.values());
      d.allKeys.sort(Arrays::compareUnsigned);
      return d;
    }
  }
}
