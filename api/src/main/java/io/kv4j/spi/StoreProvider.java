package io.kv4j.spi;

import io.kv4j.DamagedRegion;
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

  /**
   * Reads every intact entry of a damaged store without the checks that make {@link
   * #open(StoreConfig)} refuse it: the way out when a store will not open or {@link Store#verify()}
   * fails. Each key's newest intact value goes to {@code sink} once per keyspace and key, in no
   * particular order; a value is handed over only if its checksum passed, where the format has one.
   * Reports every damaged region it stepped over.
   *
   * <p>Never writes to the store's files and creates none in its directory (it may copy files
   * elsewhere and work on the copy); like a read-only open, it refuses a store another process has
   * open for writing where the engine can tell. Salvage cannot know what a damaged region held: a
   * deletion lost in one may bring back the value it deleted, an overwrite lost in one the value it
   * replaced. {@link io.kv4j.StoreCopy#salvage StoreCopy.salvage} and {@code kv4j salvage} write
   * the result to a new store.
   *
   * @param config where the store is; the engine options that matter to reading it
   * @param sink receives the intact entries
   * @return every damaged region found, empty if the store is intact
   * @throws UnsupportedOperationException if the engine cannot salvage (the default)
   * @throws io.kv4j.StoreLockedException if the store is open for writing elsewhere
   * @throws io.kv4j.StoreIOException if the files cannot be read at all
   */
  default List<DamagedRegion> salvage(StoreConfig config, SalvageSink sink) {
    throw new UnsupportedOperationException("engine '" + id() + "' cannot salvage a damaged store");
  }
}
