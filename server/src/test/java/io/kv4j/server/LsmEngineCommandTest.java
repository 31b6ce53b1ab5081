package io.kv4j.server;

import java.nio.file.Path;

/** The same commands over a persistent engine (RocksDB). */
class LsmEngineCommandTest extends CommandContractTest {
  @Override
  String uri(Path directory) {
    return "lsm:" + directory.resolve("db") + "?durability=buffered";
  }
}
