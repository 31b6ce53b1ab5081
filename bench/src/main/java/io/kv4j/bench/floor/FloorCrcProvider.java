package io.kv4j.bench.floor;

import io.kv4j.Feature;
import io.kv4j.Limits;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.spi.OptionSpec;
import io.kv4j.spi.StoreProvider;
import java.util.List;
import java.util.Set;

/**
 * The {@code floor-crc} read ceiling: the {@code floor} with a CRC32C of key and value in each
 * record, checked on every get over the value copied out. The least work per get of an engine that
 * verifies what it returns, so a verifying engine's read rate can be read against it, and the cost
 * of the check alone against {@code floor}, in the same run.
 */
public final class FloorCrcProvider implements StoreProvider {
  /** The engine id. */
  public static final String ID = "floor-crc";

  /** Creates the provider; called by the bench's {@code Instruments} and the TCK's child JVMs. */
  public FloorCrcProvider() {}

  @Override
  public String id() {
    return ID;
  }

  @Override
  public String description() {
    return "Bench instrument: the floor read ceiling plus a CRC32C of key and value checked on"
        + " every get (one probe, one copy, one check), the ceiling of a verifying engine; not a"
        + " store.";
  }

  @Override
  public Set<Feature> features() {
    return Set.of(); // it checks, but declares nothing a store promises (see the package doc)
  }

  @Override
  public Limits limits() {
    return FloorProvider.LIMITS;
  }

  @Override
  public List<OptionSpec<?>> options() {
    return List.of(FloorProvider.CAPACITY);
  }

  @Override
  public Store open(StoreConfig config) {
    return FloorProvider.open(config, ID, true);
  }
}
