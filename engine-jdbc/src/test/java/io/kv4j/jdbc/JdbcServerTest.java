package io.kv4j.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.kv4j.Durability;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreIOException;
import io.kv4j.StoreLockedException;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Connection failures, authentication errors and a server restart, per SQL server. */
class JdbcServerTest {
  @TempDir Path dir;
  private final List<Runnable> cleanup = new ArrayList<>();

  @AfterEach
  void clean() {
    cleanup.forEach(Runnable::run);
  }

  private static TestServers.Server server(String engine) {
    return TestServers.require(
        engine.equals("postgres") ? TestServers.postgres() : TestServers.mysql());
  }

  private StoreConfig.Builder config(TestServers.Server s, Path path) {
    String table = JdbcSettings.tableFor(path);
    cleanup.add(() -> s.dropStore(table));
    return s.apply(StoreConfig.builder(s.engine())).path(path);
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgres", "mysql"})
  void open_wrongPassword_isStoreIOExceptionNamingHost(String engine) {
    TestServers.Server s = server(engine);
    StoreConfig c = config(s, dir.resolve("auth")).option("password", "not-the-password").build();
    Throwable t = catchThrowable(() -> Stores.open(c).close());
    assertThat(t)
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining(s.host() + ":" + s.port())
        .hasMessageContaining("kv4j");
    assertThat(t.getCause()).as("the driver's error is kept as the cause").isNotNull();
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgres", "mysql"})
  void open_nothingListening_isStoreIOExceptionNamingHost(String engine) {
    TestServers.Server s = server(engine);
    // Port 1 (tcpmux) is privileged and unused on the test machines: connection refused at once.
    StoreConfig c = config(s, dir.resolve("refused")).option("port", "1").build();
    Throwable t = catchThrowable(() -> Stores.open(c).close());
    assertThat(t)
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining(s.host() + ":1")
        .hasMessageContaining("servers.sh");
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgres", "mysql"})
  void open_missingDatabase_isStoreIOException(String engine) {
    TestServers.Server s = server(engine);
    StoreConfig c = config(s, dir.resolve("nodb")).option("database", "kv4j_no_such_db").build();
    assertThat(catchThrowable(() -> Stores.open(c).close()))
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining(s.host() + ":" + s.port());
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgres", "mysql"})
  void open_explicitTable_isSharedByPathsAndLocked(String engine) {
    TestServers.Server s = server(engine);
    String table = "kv4j_explicit_" + engine;
    cleanup.add(() -> s.dropStore(table));
    StoreConfig a =
        s.apply(StoreConfig.builder(engine))
            .path(dir.resolve("a"))
            .option("table", table)
            .option("lock-wait", "0")
            .build();
    StoreConfig b =
        s.apply(StoreConfig.builder(engine))
            .path(dir.resolve("b"))
            .option("table", table)
            .option("lock-wait", "0")
            .build();
    try (Store first = Stores.open(a)) {
      first.put(b("k"), b("v"));
      assertThat(catchThrowable(() -> Stores.open(b).close()))
          .as("the table, not the path, is the locked location")
          .isInstanceOf(StoreLockedException.class)
          .hasMessageContaining(table);
    }
    try (Store second = Stores.open(b)) {
      assertThat(second.get(b("k"))).isEqualTo(b("v"));
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgres", "mysql"})
  void compact_keepsDataAndVacuumsOnPostgresOnly(String engine) throws Exception {
    TestServers.Server s = server(engine);
    Path path = dir.resolve("compact");
    String table = JdbcSettings.tableFor(path);
    try (Store store = Stores.open(config(s, path).build())) {
      WriteBatch fill = new WriteBatch();
      for (int i = 0; i < 500; i++) {
        fill.put(b("k" + i), new byte[200]);
      }
      store.write(fill);
      for (int i = 0; i < 500; i += 2) {
        store.delete(b("k" + i));
      }
      store.compact();
      assertThat(store.stats().keyCount()).isEqualTo(250);
      assertThat(store.get(b("k1"))).hasSize(200);
      assertThat(store.get(b("k0"))).isNull();
    }
    if (engine.equals("postgres")) {
      try (java.sql.Connection c = s.connect();
          java.sql.PreparedStatement ps =
              c.prepareStatement(
                  "SELECT last_vacuum IS NOT NULL FROM pg_stat_user_tables WHERE relname = ?")) {
        ps.setString(1, table);
        try (java.sql.ResultSet rs = ps.executeQuery()) {
          assertThat(rs.next()).as("the table %s is in pg_stat_user_tables", table).isTrue();
          assertThat(rs.getBoolean(1)).as("compact() ran a manual VACUUM").isTrue();
        }
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgres", "mysql"})
  void serverRestart_storeReconnectsAndKeepsItsLock(String engine) throws Exception {
    TestServers.Server s = server(engine);
    StoreConfig c =
        config(s, dir.resolve("restart"))
            .durability(Durability.SYNC)
            .option("lock-wait", "0")
            .build();
    try (Store store = Stores.open(c)) {
      for (int i = 0; i < 100; i++) {
        store.put(b("before" + i), b("v" + i));
      }
      TestServers.restart(engine.equals("postgres") ? "postgres" : "mariadb");
      // Every pooled connection is now dead: the first calls must reconnect, not fail. A
      // conditional batch whose connection dies before its commit runs again on a fresh one.
      assertThat(
              store.writeIf(new WriteBatch().expect(b("before1"), b("v1")).put(b("cond"), b("z"))))
          .isTrue();
      assertThat(store.get(b("cond"))).isEqualTo(b("z"));
      assertThat(store.get(b("before7"))).isEqualTo(b("v7"));
      store.put(b("after"), b("x"));
      store.write(new WriteBatch().put(b("batch"), b("y")).delete(b("before0")));
      assertThat(store.stream(KeyRange.prefix(b("before"))).count()).isEqualTo(99);
      assertThat(store.get(b("after"))).isEqualTo(b("x"));
      // The lock's session died with the server; the store takes the lock again by itself.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (store.stats().figures().get("lock.reconnects").longValue() < 1
          && System.nanoTime() < deadline) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
      }
      assertThat(store.stats().figures().get("lock.reconnects").longValue())
          .as("lock re-taken after the restart")
          .isGreaterThanOrEqualTo(1);
      assertThat(catchThrowable(() -> Stores.open(c).close()))
          .as("after the restart a second open is still refused")
          .isInstanceOf(StoreLockedException.class);
    }
  }
}
