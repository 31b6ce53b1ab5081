package io.kv4j.server;

import java.nio.file.Path;

/** The same commands over kv4j's persistent hash-log engine. */
class HashlogEngineCommandTest extends CommandContractTest {
  @Override
  String uri(Path directory) {
    return "hashlog:" + directory.resolve("db") + "?durability=buffered";
  }
}
