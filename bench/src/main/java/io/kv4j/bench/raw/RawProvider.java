package io.kv4j.bench.raw;

import io.kv4j.Feature;
import io.kv4j.Limits;
import io.kv4j.StoreConfig;
import io.kv4j.StoreInfo;
import io.kv4j.spi.StoreProvider;
import java.util.Set;

/**
 * What the raw baselines' providers share: an id and a description, and the features and limits
 * every raw store declares ({@link Raw#FEATURES}, {@link Raw#LIMITS}); each provider adds its
 * options and how it opens a store.
 */
abstract class RawProvider implements StoreProvider {
  private final String id;
  private final String description;

  RawProvider(String id, String description) {
    this.id = id;
    this.description = description;
  }

  @Override
  public final String id() {
    return id;
  }

  @Override
  public final String description() {
    return description;
  }

  @Override
  public final Set<Feature> features() {
    return Raw.FEATURES;
  }

  @Override
  public final Limits limits() {
    return Raw.LIMITS;
  }

  /**
   * What a raw store of this provider opened with {@code config} declares.
   *
   * @param id the provider's id
   * @param config the store's configuration
   * @return the store's info
   */
  static StoreInfo info(String id, StoreConfig config) {
    return new StoreInfo(
        id, Raw.FEATURES, Raw.LIMITS, config.durability(), config.path().toString(), false);
  }
}
