package io.kv4j.jdbc;

import java.nio.file.Path;

/** Exposes the path-to-table mapping to tests in other packages. */
public final class TestTables {
  private TestTables() {}

  /**
   * The table a store path maps to.
   *
   * @param path the store path
   * @return the table name
   */
  public static String tableFor(Path path) {
    return JdbcSettings.tableFor(path);
  }
}
