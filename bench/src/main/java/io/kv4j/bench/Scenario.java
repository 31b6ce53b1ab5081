package io.kv4j.bench;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/** The workloads the runner and the JMH benchmarks measure. */
public enum Scenario {
  /** Load: every key once, in random order, single puts. */
  FILLRANDOM("fillrandom", "load every key once in random order (single puts)", false),
  /**
   * Load on a fresh store: every key once, in random order, in write batches of {@value
   * Runner#BATCH} puts, one thread; ops/s counts puts, latency is per batch.
   */
  FILLBATCH(
      "fillbatch",
      "fresh store: load every key once in random order, batches of 1,000 puts, 1 thread"
          + " (ops/s: puts; latency: per batch)",
      false),
  /** Uniform random gets of existing keys. */
  READRANDOM("readrandom", "uniform random gets", false),
  /**
   * {@link io.kv4j.Store#getAll} of {@value Workload#MULTIGET_KEYS} uniform random keys; ops/s
   * counts calls, so keys/s is {@value Workload#MULTIGET_KEYS} times it. Against {@code readrandom}
   * it shows what an engine's native batch read (RocksDB multiGet, one SQL statement) saves over a
   * loop of gets.
   */
  MULTIGET(
      "multiget",
      "getAll of 16 uniform random keys (ops/s: calls; x16 for keys/s, vs readrandom's gets)",
      false),
  /** 50% read, 50% update, zipfian 0.99 scrambled. */
  YCSB_A("ycsb-a", "50% read / 50% update, zipfian", false),
  /** 95% read, 5% update, zipfian. */
  YCSB_B("ycsb-b", "95% read / 5% update, zipfian", false),
  /** 100% read, zipfian. */
  YCSB_C("ycsb-c", "100% read, zipfian", false),
  /** 95% read of recent keys, 5% insert of new keys (latest distribution). */
  YCSB_D("ycsb-d", "95% read / 5% insert, latest", false),
  /** 95% scan of 1-100 keys from a zipfian start, 5% insert. */
  YCSB_E("ycsb-e", "95% scan (1-100 keys) / 5% insert, zipfian", true),
  /** 50% read, 50% read-modify-write, zipfian. */
  YCSB_F("ycsb-f", "50% read / 50% read-modify-write, zipfian", false),
  /** Uniform random puts over existing keys. */
  OVERWRITE("overwrite", "uniform random updates of existing keys", false),
  /** Ordered scans of 100 keys from a uniform start. */
  SCAN("scan", "scan 100 keys from a uniform random start", true),
  /** 5,000 single inserts, one commit each, then 5,000 point reads in order (i*7919)%5000. */
  SINGLE_OP("single-op", "5,000 single inserts then 5,000 point reads, one thread, µs/op", false),
  /** Uniform random puts with durability SYNC, on a fresh store; reported in its own table. */
  DURABLE_PUT("durable-put", "uniform random puts acknowledged with SYNC (fsync)", false),
  /** Allocated bytes on disk divided by live bytes, after load and after the update phases. */
  FOOTPRINT("footprint", "allocated disk bytes / live bytes after load and after updates", false),
  /**
   * Space under update churn: a fresh store, loaded, then the whole data set overwritten {@code
   * --churn-rounds} times uniformly, then as often with zipfian keys; disk / live bytes sampled.
   * Long: not in the default set.
   */
  CHURN(
      "churn",
      "fresh store: overwrite every key N times uniform, then N times zipfian; disk / live bytes",
      false),
  /**
   * One reader (uniform gets) next to one writer (zipfian overwrites at full speed), against a
   * read-only window of the same length just before. Long: not in the default set.
   */
  CHURN_READS(
      "churn-reads",
      "1 reader of uniform gets while 1 writer overwrites (zipfian); vs read-only reads",
      false),
  /**
   * One scanner (100-key scans from a uniform start) next to one writer (zipfian overwrites at full
   * speed), against a scan-only window of the same length just before. Long: not in the default
   * set.
   */
  CHURN_SCANS(
      "churn-scans",
      "1 scanner of 100 keys while 1 writer overwrites (zipfian); vs scans alone",
      true),
  /**
   * Heap per key and reopen time of a fresh store loaded with {@code --scale-keys} small values.
   * Long: not in the default set.
   */
  SCALE("scale", "load many small values: heap bytes per key, then reopen + one get", false);

  private final String id;
  private final String description;
  private final boolean needsOrderedScan;

  Scenario(String id, String description, boolean needsOrderedScan) {
    this.id = id;
    this.description = description;
    this.needsOrderedScan = needsOrderedScan;
  }

  /**
   * The scenario's name on the command line and in reports.
   *
   * @return the id
   */
  public String id() {
    return id;
  }

  /**
   * One line saying what the scenario does.
   *
   * @return the description
   */
  public String description() {
    return description;
  }

  /**
   * Whether the scenario needs {@link io.kv4j.Feature#ORDERED_SCAN}.
   *
   * @return true for scans
   */
  public boolean needsOrderedScan() {
    return needsOrderedScan;
  }

  /**
   * Whether the scenario is in the default set: the long ones run only when named with {@code
   * --scenarios} or with {@code --full}.
   */
  boolean inDefaultSet() {
    return !longRunning(id);
  }

  private static boolean longRunning(String id) {
    return id.equals("churn")
        || id.equals("churn-reads")
        || id.equals("churn-scans")
        || id.equals("scale");
  }

  /**
   * Whether a scenario's rows go to a table of their own rather than the throughput tables.
   *
   * @param id a scenario id, as in {@link Result#scenario()}
   */
  static boolean ownTable(String id) {
    return id.equals("footprint") || longRunning(id);
  }

  /** Whether the scenario runs for a fixed duration on the loaded store. */
  boolean timedOnLoadedStore() {
    switch (this) {
      case READRANDOM:
      case MULTIGET:
      case YCSB_A:
      case YCSB_B:
      case YCSB_C:
      case YCSB_D:
      case YCSB_E:
      case YCSB_F:
      case OVERWRITE:
      case SCAN:
        return true;
      default:
        return false;
    }
  }

  /**
   * The scenario with an id.
   *
   * @param id such as {@code ycsb-a}
   * @return the scenario
   * @throws IllegalArgumentException naming the valid ids
   */
  public static Scenario byId(String id) {
    String k = id.trim().toLowerCase(Locale.ROOT);
    for (Scenario s : values()) {
      if (s.id.equals(k)) {
        return s;
      }
    }
    throw new IllegalArgumentException(
        "unknown scenario '" + id + "'; valid: " + String.join(", ", ids(List.of(values()))));
  }

  static List<String> ids(List<Scenario> list) {
    return list.stream().map(Scenario::id).collect(Collectors.toList());
  }

  static List<Scenario> all() {
    return Arrays.asList(values());
  }

  /** The scenarios run when {@code --scenarios} is not given, without {@code --full}. */
  static List<Scenario> defaults() {
    return Arrays.stream(values()).filter(Scenario::inDefaultSet).collect(Collectors.toList());
  }
}
