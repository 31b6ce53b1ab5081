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
public final class RefProvider implements StoreProvider {
  static final Limits LIMITS = new Limits(511, 16 << 20);
  static final Set<Feature> FEATURES =
      EnumSet.of(
          Feature.ORDERED_SCAN,
          Feature.REVERSE_SCAN,
          Feature.SNAPSHOT_SCAN,
          Feature.ATOMIC_BATCH,
          Feature.PERSISTENT,
          Feature.CHECKSUMS);
  static final OptionSpec<String> DEFECT =
      OptionSpec.choice("defect", "none", Defect.names(), "which deliberate bug to exhibit");

  /** For ServiceLoader. */
  public RefProvider() {}

  @Override
  public String id() {
    return "ref";
  }

  @Override
  public String description() {
    return "TCK reference engine with optional deliberate defects";
  }

  @Override
  public Set<Feature> features() {
    return FEATURES;
  }

  @Override
  public Limits limits() {
    return LIMITS;
  }

  @Override
  public List<OptionSpec<?>> options() {
    return List.of(DEFECT);
  }

  @Override
  public Store open(StoreConfig config) {
    return RefStore.open(config, Defect.of(config.get(DEFECT)));
  }
}
