package io.kv4j.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.Jedis;

/** Every engine on the server's classpath serves over RESP when named by its URI. */
class EngineSelectionTest {
  @TempDir Path dir;

  @ParameterizedTest
  @ValueSource(strings = {"memory", "hashlog", "lsm", "lmdb", "sqlite"})
  void engineUri_servesReadsWritesAndScans(String engine) throws Exception {
    String uri =
        engine.equals("memory")
            ? "memory:"
            : engine + ":" + dir.resolve(engine) + "?durability=buffered";
    try (TestServer server = new TestServer(uri);
        Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
      assertThat(j.mset("a", "1", "b", "2", "c", "3")).isEqualTo("OK");
      assertThat(j.incr("a")).isEqualTo(2);
      assertThat(j.mget("a", "b", "z")).containsExactly("2", "2", null);
      assertThat(j.keys("*")).containsExactlyInAnyOrder("a", "b", "c");
      if (server.store.stats().keyCountExact()) {
        assertThat(j.dbSize()).isEqualTo(3);
      } else { // RocksDB estimates its key count; DBSIZE passes the estimate on
        assertThat(j.info("kv4j")).contains("key_count_exact:0");
        assertThat(j.dbSize()).isBetween(1L, 8L);
      }
      assertThat(j.info("kv4j")).contains("engine:" + (engine.equals("lsm") ? "" : engine));
    }
  }

  @Test
  void unknownEngine_failsWithTheStoreError() {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> new TestServer("nosuch:"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown engine 'nosuch'");
  }
}
