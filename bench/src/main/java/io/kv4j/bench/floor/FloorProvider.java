package io.kv4j.bench.floor;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.Limits;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.spi.OptionSpec;
import io.kv4j.spi.StoreProvider;
import java.util.List;
import java.util.Set;

/**
 * The {@code floor} read ceiling (see the package documentation): what a get costs with nothing but
 * an index probe and a copy. Only BUFFERED; writes append until {@code capacity} is used up.
 */
public final class FloorProvider implements StoreProvider {
  /** The engine id. */
  public static final String ID = "floor";

  static final OptionSpec<Long> CAPACITY =
      OptionSpec.size(
          "capacity",
          1L << 30,
          1L << 16,
          Integer.MAX_VALUE,
          "bytes of the one mapped file; puts only append, and fail once it is full");

  static final Limits LIMITS = new Limits(Limits.MIN_MAX_KEY_SIZE, Limits.MIN_MAX_VALUE_SIZE);

  /** Creates the provider; called by the bench's {@code Instruments} and the TCK's child JVMs. */
  public FloorProvider() {}

  @Override
  public String id() {
    return ID;
  }

  @Override
  public String description() {
    return "Bench instrument: the least work per get of a hash index over a mapped log (one"
        + " probe, one copy; no checksum, guard or durability), a read ceiling; not a store.";
  }

  @Override
  public Set<Feature> features() {
    return Set.of();
  }

  @Override
  public Limits limits() {
    return LIMITS;
  }

  @Override
  public List<OptionSpec<?>> options() {
    return List.of(CAPACITY);
  }

  @Override
  public Store open(StoreConfig config) {
    return open(config, ID, false);
  }

  /** Opens a floor store as engine {@code id}, {@code checked} or not; refuses SYNC. */
  static Store open(StoreConfig config, String id, boolean checked) {
    if (config.durability() == Durability.SYNC) {
      throw new IllegalArgumentException(
          "engine '"
              + id
              + "' cannot honour durability SYNC: it never forces its file; open it with"
              + " durability=buffered");
    }
    return new FloorStore(config, config.get(CAPACITY), id, checked);
  }
}
