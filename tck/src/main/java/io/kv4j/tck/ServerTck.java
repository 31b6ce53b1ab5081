package io.kv4j.tck;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The kit for an engine whose data lives on a server: the store path only names a table or key
 * prefix, so the rules that damage files under the location (10.7, group 12) are skipped with that
 * reason. Its {@link #environment()} is the default one with {@link
 * TckEnvironment#dataLivesInLocationFiles()} false.
 */
public abstract class ServerTck extends StoreTck {
  /** Tables or key prefixes a run created, for a subclass's clean-up after the run. */
  protected static final Set<String> NAMESPACES = ConcurrentHashMap.newKeySet();

  /** For subclasses. */
  protected ServerTck() {}

  /**
   * The default environment, the data on a server.
   *
   * @return the environment
   */
  @Override
  protected TckEnvironment environment() {
    return TckEnvironment.builder().dataLivesInLocationFiles(false).build();
  }
}
