package io.kv4j.tck;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The TCK for engines whose data lives on a server. It sits in the kit's package only to replace
 * rule 10.7, which overwrites the files in the store directory: a server engine keeps no files
 * there (the path only names the table or key prefix), so the rule cannot apply and is skipped with
 * that reason instead of failing on a directory that does not exist.
 */
public abstract class ServerTck extends StoreTck {
  /** Tables or key prefixes the run created, for clean-up. */
  protected static final Set<String> NAMESPACES = ConcurrentHashMap.newKeySet();

  /** For subclasses. */
  protected ServerTck() {}

  @Test
  @Override
  void required_r10_7_corruptLocationIsReported() {
    Assumptions.abort(
        "[10.7] not applicable: engine '"
            + engine()
            + "' keeps its data on the server; the store path only names the namespace and no"
            + " file in it can be damaged");
  }
}
