package io.kv4j.jdbc;

import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import io.kv4j.tck.ServerTck;
import java.nio.file.Path;
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

  @Override
  protected StoreConfig config(Path directory, Durability durability) {
    return server
        .apply(StoreConfig.builder("mysql"))
        .path(directory)
        .durability(durability)
        .build();
  }

  /** The store's table and those of its keyspaces. */
  @Override
  protected void dropNamespace(Path directory) {
    server.dropStore(TestTables.tableFor(directory));
  }
}
