package io.kv4j.tck;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The TCK for engines whose data lives on a server: the store path only names the table or key
 * prefix, so rule 10.7 (damaged files under the location) is skipped with that reason.
 */
public abstract class ServerTck extends StoreTck {
  /** Tables or key prefixes the run created, for clean-up. */
  protected static final Set<String> NAMESPACES = ConcurrentHashMap.newKeySet();

  /** For subclasses. */
  protected ServerTck() {}

  @Override
  protected boolean dataLivesInLocationFiles() {
    return false;
  }
}
