package io.kv4j.tck;

import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import io.kv4j.jdbc.TestServers;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The kv4j TCK against a real MariaDB (MySQL) server (skipped, with how to start one, if absent).
 */
class MysqlTckTest extends ServerTck {
  private static TestServers.Server server;

  @BeforeAll
  static void server() {
    server = TestServers.require(TestServers.mysql());
  }

  @AfterAll
  static void dropTables() {
    for (String t : NAMESPACES) {
      server.dropStore(t);
    }
    NAMESPACES.clear();
  }

  @Override
  protected StoreConfig config(Path directory, Durability durability) {
    NAMESPACES.add(io.kv4j.jdbc.TestTables.tableFor(directory));
    return server
        .apply(StoreConfig.builder("mysql"))
        .path(directory)
        .durability(durability)
        .build();
  }
}
