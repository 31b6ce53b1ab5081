package io.kv4j.server;

import java.nio.file.Path;

class MemoryEngineCommandTest extends CommandContractTest {
  @Override
  String uri(Path directory) {
    return "memory:";
  }
}
