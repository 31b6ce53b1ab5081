package io.kv4j.bench;

import io.kv4j.Durability;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One workload the runner and the JMH benchmarks measure: a value of the catalogue ({@code
 * scenarios.conf}, read by {@link Catalogue}), never code. What a scenario does is its {@link Kind}
 * (the runner's procedure for it) with the values below.
 *
 * @param id the name on the command line and in the reports
 * @param kind how it is measured
 * @param description one line for the report's scenario list
 * @param titles the charts' titles in words, by phase ({@code ""}: the scenario's own)
 * @param mix the operations it runs ({@link Mix#NONE} for kinds that run their own)
 * @param distribution the keys its operations pick, or null when it picks none
 * @param freshStore true when it runs on a store of its own, false on the run's loaded store
 * @param storeName the name of its store: the directory {@code <engine>-<name>} under the data
 *     root, the server engines' table or key prefix {@code kv4j_bench_<name>}
 * @param threads how many threads run it
 * @param sync true when its writes are acknowledged with {@link Durability#SYNC}, false when with
 *     {@code --durability}
 * @param keysOption the option giving its key count ({@code --keys}, {@code --single-op-count},
 *     {@code --scale-keys})
 * @param valueSizeOption the option giving its value size ({@code --value-size}, {@code
 *     --scale-value-size})
 * @param batch puts per write batch (batch-load and scale), else 0
 * @param phases the phases of its rows, in order (for churn: each phase's key distribution)
 * @param longRunning true when it runs only when named in {@code --scenarios} or with {@code
 *     --full}
 * @param ownTable true when its rows go to a table of their own instead of the durability tables,
 *     the picks and the throughput charts
 * @param operations for a timed scenario, the operations each measurement makes, split among the
 *     threads (a {@code --workload}'s {@code operationcount}); 0 to measure for {@code --duration}
 */
public record Scenario(
    String id,
    Kind kind,
    String description,
    Map<String, String> titles,
    Mix mix,
    Distribution distribution,
    boolean freshStore,
    String storeName,
    Threads threads,
    boolean sync,
    String keysOption,
    String valueSizeOption,
    int batch,
    List<String> phases,
    boolean longRunning,
    boolean ownTable,
    long operations) {

  /**
   * The id of the user's own workload ({@code --workload}, {@code --set}): not in the catalogue,
   * first in every table.
   */
  public static final String YOURS = "workload";

  /** How a scenario is measured: each kind is one procedure of the runner. */
  public enum Kind {
    /** The main store's load: every key once in a seeded random order, single puts. */
    LOAD("load"),
    /** A fresh store loaded in atomic write batches of {@link Scenario#batch()} puts. */
    BATCH_LOAD("batch-load"),
    /** The mix for {@code --warmup} + {@code --duration} at each thread count. */
    TIMED("timed"),
    /** A fresh store: single inserts, then as many point reads (phases insert, read). */
    SINGLE_OP("single-op"),
    /** Disk bytes / live bytes at rest, at fixed points of the run. */
    FOOTPRINT("footprint"),
    /** A fresh store, loaded, then overwritten {@code --churn-rounds} times per phase. */
    CHURN("churn"),
    /** The mix on one thread alone, then next to one writer of zipfian overwrites. */
    DURING_CHURN("during-churn"),
    /** A fresh store loaded with many keys: heap bytes per key and reopen time. */
    SCALE("scale");

    private final String word;

    Kind(String word) {
      this.word = word;
    }

    /**
     * The kind's word in the catalogue.
     *
     * @return such as {@code batch-load}
     */
    public String word() {
      return word;
    }
  }

  /** The keys a scenario's operations pick among the loaded ones. */
  public enum Distribution {
    /** Every loaded key equally likely. */
    UNIFORM,
    /** Zipfian 0.99, scrambled (FNV hash) as YCSB's {@code ScrambledZipfianGenerator}. */
    ZIPFIAN,
    /** The newest keys most likely: zipfian back from the newest completed insert (YCSB D). */
    LATEST,
    /**
     * YCSB's {@code ScrambledZipfianGenerator} exactly: a zipfian rank among 10^10 items,
     * FNV-hashed onto the loaded keys ({@link Zipfian#YCSB_SCRAMBLED}); {@code
     * requestdistribution=zipfian} of a {@code --workload}.
     */
    YCSB_ZIPFIAN
  }

  /**
   * How many threads run a scenario: every {@code --threads} count, the largest of them, or a fixed
   * number.
   *
   * @param fixed the fixed count, or {@link #EACH} or {@link #LARGEST}
   */
  public record Threads(int fixed) {
    /** Every {@code --threads} count in turn. */
    public static final int EACH = 0;

    /** The largest {@code --threads} count. */
    public static final int LARGEST = -1;

    /**
     * Checks the value.
     *
     * @param fixed the fixed count, or {@link #EACH} or {@link #LARGEST}
     */
    public Threads {
      if (fixed < LARGEST) {
        throw new IllegalArgumentException("threads must be each, largest or 1.., got " + fixed);
      }
    }

    /**
     * The thread counts to run.
     *
     * @param selected the {@code --threads} counts
     * @return one count or, for {@link #EACH}, all of them
     */
    public List<Integer> counts(List<Integer> selected) {
      if (fixed == EACH) {
        return selected;
      }
      if (fixed == LARGEST) {
        return List.of(selected.stream().mapToInt(Integer::intValue).max().orElse(1));
      }
      return List.of(fixed);
    }
  }

  /**
   * Checks the values that every scenario needs and copies the collections.
   *
   * @param id the name on the command line and in the reports
   * @param kind how it is measured
   * @param description one line for the report's scenario list
   * @param titles the charts' titles in words, by phase
   * @param mix the operations it runs
   * @param distribution the keys its operations pick, or null
   * @param freshStore true when it runs on a store of its own
   * @param storeName the name of its store
   * @param threads how many threads run it
   * @param sync true when its writes are acknowledged with SYNC
   * @param keysOption the option giving its key count
   * @param valueSizeOption the option giving its value size
   * @param batch puts per write batch, or 0
   * @param phases the phases of its rows
   * @param longRunning true when it runs only when named or with {@code --full}
   * @param ownTable true when its rows go to a table of their own
   * @param operations operations per measurement, or 0 to measure for {@code --duration}
   */
  public Scenario {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(description, "description");
    Objects.requireNonNull(mix, "mix");
    Objects.requireNonNull(storeName, "storeName");
    Objects.requireNonNull(threads, "threads");
    titles = Map.copyOf(titles);
    phases = List.copyOf(phases);
    if (operations < 0 || (operations > 0 && kind != Kind.TIMED)) {
      throw new IllegalArgumentException(
          "only a timed scenario runs a fixed number of operations, got " + operations);
    }
  }

  /**
   * Whether the scenario needs {@link io.kv4j.Feature#ORDERED_SCAN}: its mix scans.
   *
   * @return true for scans
   */
  public boolean needsOrderedScan() {
    return mix.has(Mix.Operation.SCAN);
  }

  /**
   * Whether the scenario is in the default set: the long ones run only when named with {@code
   * --scenarios} or with {@code --full}.
   *
   * @return true unless long
   */
  public boolean inDefaultSet() {
    return !longRunning;
  }

  /**
   * Whether the scenario runs on the run's loaded main store (as opposed to a fresh one).
   *
   * @return true for the main store
   */
  public boolean onMainStore() {
    return !freshStore;
  }

  /**
   * The durability its writes are acknowledged with.
   *
   * @param run the run's {@code --durability}
   * @return SYNC for a sync scenario, else {@code run}
   */
  public Durability durability(Durability run) {
    return sync ? Durability.SYNC : run;
  }

  /**
   * The chart title in words of the scenario or one of its phases.
   *
   * @param phase the phase, or {@code ""}
   * @return the words, or null when the catalogue gives none
   */
  public String title(String phase) {
    return titles.get(phase);
  }
}
