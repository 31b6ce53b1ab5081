package io.kv4j.tck;

import java.nio.file.Path;
import java.util.List;

/**
 * The kit for an engine whose data lives on a server: the store path only names a table or key
 * prefix, so the rules that damage files under the location (10.7, group 12) are skipped with that
 * reason. Its {@link #environment()} is the default one with {@link
 * TckEnvironment#dataLivesInLocationFiles()} false.
 *
 * <p>What a rule leaves on the server is the engine test's to remove: override {@link
 * #dropNamespace(Path)}, which the kit calls after each rule for each directory the rule
 * configured.
 */
public abstract class ServerTck extends StoreTck {
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

  /**
   * Removes from the server what stores opened with a directory's config left there (the table, the
   * key prefix the directory names), so that a run leaves nothing behind. The kit calls it after
   * each rule, once for each directory the rule passed to {@link #config}, in the order they were
   * first configured, after the rule's stores are closed (its child JVMs have ended by then), on
   * the rule's thread. A directory may name nothing that exists (the kit asks for configs it never
   * opens, and a store may already have been dropped): removing it must then do nothing. An
   * exception fails the rule; the kit still calls it for the other directories.
   *
   * @param directory a directory the rule passed to {@link #config}
   * @throws Exception if the server could not be cleaned; the rule then fails with it
   */
  protected void dropNamespace(Path directory) throws Exception {}

  @Override
  final void afterRule(List<Path> directories) throws Exception {
    Exception first = null;
    for (Path d : directories) {
      try {
        dropNamespace(d);
      } catch (Exception e) {
        if (first == null) {
          first = e;
        } else {
          first.addSuppressed(e);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }
}
