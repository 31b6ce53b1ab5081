package io.kv4j.spi;

import io.kv4j.Feature;
import io.kv4j.Limits;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import java.util.List;
import java.util.Set;

/**
 * An engine, found by {@link java.util.ServiceLoader}. Implementations are public, have a public
 * no-argument constructor, are registered in {@code META-INF/services/io.kv4j.spi.StoreProvider}
 * (and in {@code module-info.java} with {@code provides} when modular), and are stateless: {@link
 * #open(StoreConfig)} may be called from many threads.
 */
public interface StoreProvider {

  /**
   * The engine id used in configuration: short, lowercase, unique, such as {@code hashlog}.
   *
   * @return the id
   */
  String id();

  /**
   * Other ids that select this engine, such as {@code lsm} for {@code rocksdb}.
   *
   * @return the aliases, possibly empty
   */
  default Set<String> aliases() {
    return Set.of();
  }

  /**
   * One line saying what the engine is and what it is good for.
   *
   * @return the description
   */
  String description();

  /**
   * The features every store of this engine has.
   *
   * @return the features
   */
  Set<Feature> features();

  /**
   * The key and value limits every store of this engine has.
   *
   * @return the limits
   */
  Limits limits();

  /**
   * The engine options accepted in {@link StoreConfig}, with type, default and unit. Any other key
   * is rejected when the config is built.
   *
   * @return the options
   */
  List<OptionSpec<?>> options();

  /**
   * Opens (and, if allowed, creates) a store. The config was already validated against {@link
   * #options()}.
   *
   * @param config what to open
   * @return the open store
   * @throws io.kv4j.StoreLockedException if the location is open elsewhere
   * @throws io.kv4j.StoreCorruptedException if the location holds damaged or foreign data
   * @throws io.kv4j.StoreIOException if the location cannot be read or created
   */
  Store open(StoreConfig config);
}
