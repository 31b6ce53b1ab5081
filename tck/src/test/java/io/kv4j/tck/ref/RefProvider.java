package io.kv4j.tck.ref;

import io.kv4j.Feature;
import io.kv4j.Limits;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.spi.OptionSpec;
import io.kv4j.spi.StoreProvider;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * {@code ref}: a small persistent engine written directly against {@link Store} (no {@code
 * AbstractStore}; its directory opened through {@code StoreDirectory}), used to prove the kit. With
 * {@code defect=none} it must pass every rule; each other {@link Defect} breaks exactly one
 * promise, and the kit must catch it with the rule meant for it.
 */
public class RefProvider implements StoreProvider {
  static final Limits LIMITS = new Limits(511, 16 << 20);
  static final Set<Feature> FEATURES =
      EnumSet.of(
          Feature.ORDERED_SCAN,
          Feature.REVERSE_SCAN,
          Feature.SNAPSHOT_SCAN,
          Feature.ATOMIC_BATCH,
          Feature.PERSISTENT,
          Feature.CHECKSUMS,
          Feature.CONDITIONAL_WRITE,
          Feature.CONDITIONAL_BATCH,
          Feature.SNAPSHOT_READ,
          Feature.BACKUP,
          Feature.KEYSPACES,
          Feature.KEYSPACE_BATCH);
  static final OptionSpec<String> DEFECT =
      OptionSpec.choice("defect", "none", Defect.names(), "which deliberate bug to exhibit");

  private final String id;
  private final Set<Feature> features;

  /** For ServiceLoader: {@code ref}, every feature. */
  public RefProvider() {
    this("ref", FEATURES);
  }

  private RefProvider(String id, Set<Feature> features) {
    this.id = id;
    this.features = features.isEmpty() ? EnumSet.noneOf(Feature.class) : EnumSet.copyOf(features);
  }

  /**
   * {@code ref-none}: the same engine declaring no feature. It refuses batches and reverse scans
   * (naming the feature), and its scans, though ordered and snapshot, promise neither.
   */
  public static final class NoFeatures extends RefProvider {
    /** For ServiceLoader. */
    public NoFeatures() {
      super("ref-none", Set.of());
    }
  }

  /** {@code ref-o}: {@code ORDERED_SCAN} only, so a reverse scan is refused. */
  public static final class Ordered extends RefProvider {
    /** For ServiceLoader. */
    public Ordered() {
      super("ref-o", Set.of(Feature.ORDERED_SCAN));
    }
  }

  /** {@code ref-or}: {@code ORDERED_SCAN} and {@code REVERSE_SCAN}. */
  public static final class OrderedReverse extends RefProvider {
    /** For ServiceLoader. */
    public OrderedReverse() {
      super("ref-or", Set.of(Feature.ORDERED_SCAN, Feature.REVERSE_SCAN));
    }
  }

  /** {@code ref-ors}: ordered, reverse and snapshot scans; no batches, not persistent. */
  public static final class OrderedReverseSnapshot extends RefProvider {
    /** For ServiceLoader. */
    public OrderedReverseSnapshot() {
      super("ref-ors", Set.of(Feature.ORDERED_SCAN, Feature.REVERSE_SCAN, Feature.SNAPSHOT_SCAN));
    }
  }

  /** {@code ref-b}: {@code ATOMIC_BATCH} only. */
  public static final class BatchOnly extends RefProvider {
    /** For ServiceLoader. */
    public BatchOnly() {
      super("ref-b", Set.of(Feature.ATOMIC_BATCH));
    }
  }

  /** {@code ref-p}: {@code PERSISTENT} only (no checksums, no batches, no scan promises). */
  public static final class PersistentOnly extends RefProvider {
    /** For ServiceLoader. */
    public PersistentOnly() {
      super("ref-p", Set.of(Feature.PERSISTENT));
    }
  }

  /** {@code ref-k}: {@code KEYSPACES} only (no batches, no scans, not persistent). */
  public static final class KeyspacesOnly extends RefProvider {
    /** For ServiceLoader. */
    public KeyspacesOnly() {
      super("ref-k", Set.of(Feature.KEYSPACES));
    }
  }

  /**
   * {@code ref-kb}: {@code KEYSPACES} and {@code ATOMIC_BATCH} without {@code KEYSPACE_BATCH}, so a
   * batch naming another keyspace is refused.
   */
  public static final class KeyspacesBatches extends RefProvider {
    /** For ServiceLoader. */
    public KeyspacesBatches() {
      super("ref-kb", Set.of(Feature.KEYSPACES, Feature.ATOMIC_BATCH));
    }
  }

  /** {@code ref-kx}: {@code KEYSPACES}, {@code ATOMIC_BATCH} and {@code KEYSPACE_BATCH}. */
  public static final class KeyspaceBatches extends RefProvider {
    /** For ServiceLoader. */
    public KeyspaceBatches() {
      super("ref-kx", Set.of(Feature.KEYSPACES, Feature.ATOMIC_BATCH, Feature.KEYSPACE_BATCH));
    }
  }

  /**
   * {@code ref-unlisted}: {@code ref} with every feature, in no {@code META-INF/services} file, so
   * the registry of {@code Stores} never holds it: the kit runs it only through {@code
   * TckRunner.forProvider}.
   */
  public static final class Unlisted extends RefProvider {
    /** For the kit, which makes it from its class name. */
    public Unlisted() {
      super("ref-unlisted", FEATURES);
    }
  }

  @Override
  public String id() {
    return id;
  }

  @Override
  public String description() {
    return "TCK reference engine with optional deliberate defects";
  }

  @Override
  public Set<Feature> features() {
    return features;
  }

  @Override
  public Limits limits() {
    return LIMITS;
  }

  @Override
  public List<OptionSpec<?>> options() {
    return List.of(DEFECT);
  }

  /**
   * Makes the background flusher of a {@code ref} store fail from now on (for the kit's {@code
   * StoreTck.failBackgroundWork}).
   *
   * @param store a store this provider opened
   * @return whether it has a flusher (opened read-write with BUFFERED), now failing
   */
  public static boolean failBackgroundWork(Store store) {
    return store instanceof RefStore r && r.failBackgroundWork();
  }

  @Override
  public Store open(StoreConfig config) {
    return RefStore.open(config, Defect.of(config.get(DEFECT)), id, features);
  }
}
