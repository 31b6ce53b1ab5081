package io.kv4j;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * Static facts about an open store.
 *
 * @param engine the engine id, such as {@code hashlog}
 * @param features what the engine supports
 * @param limits key and value size limits
 * @param durability the durability writes are acknowledged with
 * @param location where the data lives: a directory path, or {@code memory:}
 * @param readOnly whether writes are refused
 */
public record StoreInfo(
    String engine,
    Set<Feature> features,
    Limits limits,
    Durability durability,
    String location,
    boolean readOnly) {

  /**
   * Checks and copies the arguments.
   *
   * @param engine the engine id
   * @param features the features
   * @param limits the limits
   * @param durability the durability
   * @param location the location
   * @param readOnly whether writes are refused
   * @throws NullPointerException if an argument is null
   */
  public StoreInfo {
    Objects.requireNonNull(engine, "engine");
    EnumSet<Feature> set = EnumSet.noneOf(Feature.class);
    set.addAll(features);
    features = Collections.unmodifiableSet(set);
    Objects.requireNonNull(limits, "limits");
    Objects.requireNonNull(durability, "durability");
    Objects.requireNonNull(location, "location");
  }

  /**
   * Whether the engine declares a feature.
   *
   * @param feature the feature
   * @return true if declared
   */
  public boolean has(Feature feature) {
    return features.contains(feature);
  }

  /**
   * A short description for error messages: {@code engine 'x' at /path}.
   *
   * @return the description
   */
  public String describe() {
    return "engine '" + engine + "' at " + location;
  }
}
