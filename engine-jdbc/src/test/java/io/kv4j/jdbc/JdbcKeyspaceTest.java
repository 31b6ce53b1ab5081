package io.kv4j.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Keyspaces as tables: names differing only in case, the longest names against the servers'
 * identifier limits, the catalog after a crash between DDL steps, stores made before keyspaces, and
 * a drop racing calls on the dropped and on other keyspaces.
 */
class JdbcKeyspaceTest {
  private static final Duration LIMIT = Duration.ofSeconds(60);
  @TempDir Path dir;
  private final List<Runnable> cleanup = new ArrayList<>();

  @AfterEach
  void clean() {
    cleanup.forEach(Runnable::run);
  }

  private TestServers.Server server(String engine) {
    return TestServers.require(
        engine.equals("postgres") ? TestServers.postgres() : TestServers.mysql());
  }

  private StoreConfig config(String engine, Path path) {
    TestServers.Server s = server(engine);
    String table = JdbcSettings.tableFor(path);
    cleanup.add(() -> s.dropStore(table));
    return s.apply(StoreConfig.builder(engine)).path(path).build();
  }

  private static Dialect dialect(String engine) {
    return engine.equals("postgres") ? PostgresDialect.INSTANCE : MysqlDialect.INSTANCE;
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** The catalog's rows: name to {table, state}. */
  private static Map<String, String[]> catalog(TestServers.Server s, String storeTable)
      throws SQLException {
    Map<String, String[]> rows = new TreeMap<>();
    try (Connection c = s.connect();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT name, tbl, state FROM " + s.quote(Keyspaces.catalogFor(storeTable)))) {
      while (rs.next()) {
        rows.put(rs.getString(1), new String[] {rs.getString(2), rs.getString(3)});
      }
    }
    return rows;
  }

  private static boolean tableExists(TestServers.Server s, String engine, String table)
      throws SQLException {
    try (Connection c = s.connect()) {
      return dialect(engine).tableExists(c, table);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgres", "mysql"})
  void keyspaces_namesDifferingOnlyInCase_areSeparateTables(String engine) throws Exception {
    StoreConfig c = config(engine, dir.resolve("case"));
    List<String> names = List.of("Users", "users", "USERS", "uSeRs");
    try (Store store = Stores.open(c)) {
      for (String n : names) {
        store.keyspace(n).put(b("k"), b(n));
      }
      store.put(b("k"), b("default"));
      for (String n : names) {
        assertThat(store.keyspace(n).get(b("k"))).as("keyspace %s", n).isEqualTo(b(n));
      }
      assertThat(store.keyspaces()).containsExactlyInAnyOrderElementsOf(names);
      assertThat(store.dropKeyspace("users")).isTrue();
      assertThat(store.keyspaces()).containsExactlyInAnyOrder("Users", "USERS", "uSeRs");
      assertThat(store.keyspace("Users").get(b("k"))).isEqualTo(b("Users"));
    }
    TestServers.Server s = server(engine);
    Map<String, String[]> rows = catalog(s, JdbcSettings.tableFor(dir.resolve("case")));
    assertThat(rows).containsOnlyKeys("Users", "USERS", "uSeRs");
    assertThat(rows.values().stream().map(r -> r[0]).distinct()).hasSize(3);
    for (String[] r : rows.values()) {
      assertThat(r[0]).as("keyspace tables are lower case").isEqualTo(r[0].toLowerCase());
      assertThat(r[1]).isEqualTo(Keyspaces.READY);
    }
    try (Store store = Stores.open(c)) {
      assertThat(store.keyspaces()).containsExactly("USERS", "Users", "uSeRs");
      assertThat(store.keyspace("uSeRs").get(b("k"))).isEqualTo(b("uSeRs"));
      assertThat(store.keyspace("users").get(b("k"))).as("dropped, opened again").isNull();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgres", "mysql"})
  void keyspaces_longestNames_fitTheIdentifierLimits(String engine) throws Exception {
    TestServers.Server s = server(engine);
    String storeTable = "T" + "x".repeat(60) + "_9"; // 63 characters: the option's limit
    assertThat(storeTable).hasSize(63);
    cleanup.add(() -> s.dropStore(storeTable));
    StoreConfig c =
        s.apply(StoreConfig.builder(engine))
            .path(dir.resolve("long"))
            .option("table", storeTable)
            .build();
    List<String> names = List.of("K".repeat(63) + "a", "K".repeat(63) + "A", "k".repeat(64));
    try (Store store = Stores.open(c)) {
      for (String n : names) {
        store.keyspace(n).put(b("k"), b(n));
      }
      for (String n : names) {
        assertThat(store.keyspace(n).get(b("k"))).as("keyspace %s", n).isEqualTo(b(n));
      }
    }
    assertThat(Keyspaces.catalogFor(storeTable).length()).isLessThanOrEqualTo(63);
    Map<String, String[]> rows = catalog(s, storeTable);
    assertThat(rows).containsOnlyKeys(names);
    for (String[] r : rows.values()) {
      assertThat(r[0].getBytes(StandardCharsets.UTF_8).length)
          .as("table %s within PostgreSQL's 63 bytes and MySQL's 64", r[0])
          .isLessThanOrEqualTo(63);
      assertThat(tableExists(s, engine, r[0])).as("table %s", r[0]).isTrue();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgres", "mysql"})
  void open_afterCrashBetweenDdlSteps_settlesTheCatalog(String engine) throws Exception {
    Path path = dir.resolve("crash");
    StoreConfig c = config(engine, path);
    String storeTable = JdbcSettings.tableFor(path);
    try (Store store = Stores.open(c)) {
      store.keyspace("kept").put(b("k"), b("v"));
    }
    // What a crash leaves on MySQL, whose DDL commits on its own: a row still "creating" with its
    // table made, a row "dropping" whose table was not dropped yet, one whose table was.
    TestServers.Server s = server(engine);
    Dialect d = dialect(engine);
    String half = Keyspaces.tableFor(storeTable, "half", 1);
    String gone = Keyspaces.tableFor(storeTable, "gone", 2);
    String gone2 = Keyspaces.tableFor(storeTable, "gone2", 3);
    try (Connection conn = s.connect()) {
      String ins = "INSERT INTO " + s.quote(Keyspaces.catalogFor(storeTable)) + " VALUES (?, ?, ?)";
      try (PreparedStatement ps = conn.prepareStatement(ins)) {
        for (String[] r :
            List.of(
                new String[] {"half", half, Keyspaces.CREATING},
                new String[] {"gone", gone, Keyspaces.DROPPING},
                new String[] {"gone2", gone2, Keyspaces.DROPPING})) {
          ps.setString(1, r[0]);
          ps.setString(2, r[1]);
          ps.setString(3, r[2]);
          ps.executeUpdate();
        }
      }
      Dialect.execute(conn, d.createTable(half));
      Dialect.execute(conn, d.createTable(gone));
      Dialect.execute(conn, "INSERT INTO " + s.quote(gone) + " (k, v) VALUES ('a', 'b')");
    }
    StoreConfig readOnly = c.toBuilder().readOnly(true).build();
    try (Store ro = Stores.open(readOnly)) {
      assertThat(ro.keyspaces()).as("only ready keyspaces are listed").containsExactly("kept");
    }
    try (Store store = Stores.open(c)) {
      assertThat(store.keyspaces()).containsExactly("kept");
      assertThat(catalog(s, storeTable)).containsOnlyKeys("kept");
      assertThat(tableExists(s, engine, half)).as("half-created table dropped").isFalse();
      assertThat(tableExists(s, engine, gone)).as("half-dropped table dropped").isFalse();
      assertThat(store.keyspace("gone").get(b("a"))).as("a name created again is empty").isNull();
      assertThat(store.keyspace("half").get(b("a"))).isNull();
      assertThat(catalog(s, storeTable).get("gone")[0]).as("a new table").isNotEqualTo(gone);
      assertThat(store.keyspace("kept").get(b("k"))).isEqualTo(b("v"));
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgres", "mysql"})
  void open_storeMadeBeforeKeyspaces_gainsKeyspaces(String engine) throws Exception {
    Path path = dir.resolve("old");
    StoreConfig c = config(engine, path);
    String storeTable = JdbcSettings.tableFor(path);
    TestServers.Server s = server(engine);
    try (Connection conn = s.connect()) {
      Dialect.execute(conn, dialect(engine).createTable(storeTable));
      Dialect.execute(conn, "INSERT INTO " + s.quote(storeTable) + " (k, v) VALUES ('a', 'b')");
    }
    try (Store store = Stores.open(c)) {
      assertThat(store.keyspaces()).isEmpty();
      assertThat(tableExists(s, engine, Keyspaces.catalogFor(storeTable)))
          .as("listing creates no catalog")
          .isFalse();
      assertThat(store.get(b("a"))).isEqualTo(b("b"));
      store.keyspace("new").put(b("a"), b("c"));
      assertThat(store.get(b("a"))).isEqualTo(b("b"));
      assertThat(store.keyspaces()).containsExactly("new");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgres", "mysql"})
  void drop_racingCalls_failsOnlyTheDroppedKeyspacesWithClosed(String engine) throws Exception {
    StoreConfig c = config(engine, dir.resolve("race"));
    try (Store store = Stores.open(c)) {
      Store victim = store.keyspace("victim");
      Store other = store.keyspace("other");
      AtomicLong victimOps = new AtomicLong();
      AtomicLong otherBatches = new AtomicLong();
      AtomicBoolean stop = new AtomicBoolean();
      ExecutorService pool = Executors.newFixedThreadPool(2);
      try {
        Future<Throwable> onVictim =
            pool.submit(
                () -> {
                  try {
                    for (long i = 0; ; i++) {
                      victim.put(b("k" + (i % 50)), b("v" + i));
                      victim.get(b("k" + (i % 50)));
                      victimOps.incrementAndGet();
                    }
                  } catch (Throwable t) {
                    return t;
                  }
                });
        Future<Long> onOther =
            pool.submit(
                () -> {
                  long i = 0;
                  while (!stop.get()) {
                    store.write(
                        new WriteBatch()
                            .put("other", b("n"), b(Long.toString(i)))
                            .put(b("n"), b(Long.toString(i))));
                    i++;
                    otherBatches.incrementAndGet();
                  }
                  return i;
                });
        long deadline = System.nanoTime() + LIMIT.toNanos();
        while (victimOps.get() < 20 || otherBatches.get() < 1) { // both running when dropped
          assertThat(System.nanoTime() - deadline)
              .as("calls on victim and other within %s", LIMIT)
              .isNegative();
          LockSupport.parkNanos(1_000_000);
        }
        assertThat(store.dropKeyspace("victim")).isTrue();
        assertThat(onVictim.get(LIMIT.toSeconds(), TimeUnit.SECONDS))
            .as("a call on the dropped keyspace fails only as closed")
            .isInstanceOf(StoreClosedException.class);
        stop.set(true);
        long batches = onOther.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(batches).isPositive();
        assertThat(other.get(b("n"))).isEqualTo(b(Long.toString(batches - 1)));
        assertThat(store.get(b("n"))).isEqualTo(b(Long.toString(batches - 1)));
        assertThat(store.keyspaces()).containsExactly("other");
        assertThat(store.keyspace("victim").get(b("k1"))).isNull();
      } finally {
        stop.set(true);
        pool.shutdownNow();
      }
    }
  }
}
