package io.kv4j.jdbc;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * Where the test servers are: system property {@code kv4j.test.<server>.<key>}, else environment
 * {@code KV4J_TEST_<SERVER>_<KEY>}, else the defaults of {@code .ci/servers.sh}. When a server does
 * not answer, tests are skipped with a message saying how to start it; with {@code CI=true} or
 * {@code -Dkv4j.test.requireServers=true} they fail instead.
 */
public final class TestServers {
  private TestServers() {}

  /** One server's connection settings. */
  public record Server(
      String engine, String host, int port, String user, String password, String database) {
    /** The engine options for these settings. */
    public io.kv4j.StoreConfig.Builder apply(io.kv4j.StoreConfig.Builder b) {
      return b.option("host", host)
          .option("port", Integer.toString(port))
          .option("user", user)
          .option("password", password)
          .option("database", database)
          .option("connect-timeout", "3000");
    }

    String jdbcUrl() {
      return engine.equals("postgres")
          ? "jdbc:postgresql://" + host + ":" + port + "/" + database + "?connectTimeout=3"
          : "jdbc:mariadb://" + host + ":" + port + "/" + database + "?connectTimeout=3000";
    }

    /** A fresh JDBC connection, for test set-up and clean-up. */
    public Connection connect() throws SQLException {
      Properties p = new Properties();
      p.setProperty("user", user);
      p.setProperty("password", password);
      return DriverManager.getConnection(jdbcUrl(), p);
    }

    /**
     * Drops a store: its keyspaces' tables (listed in its catalog, whatever their state), the
     * catalog and the store's table, where they exist.
     */
    public void dropStore(String table) {
      String catalog = catalogOf(table);
      java.util.List<String> tables = new java.util.ArrayList<>();
      try (Connection c = connect();
          Statement st = c.createStatement()) {
        try (java.sql.ResultSet rs = st.executeQuery("SELECT tbl FROM " + quote(catalog))) {
          while (rs.next()) {
            tables.add(rs.getString(1));
          }
        } catch (SQLException noCatalog) {
          // The store never had a keyspace.
        }
      } catch (SQLException e) {
        throw new IllegalStateException("cannot list the keyspaces of test table " + table, e);
      }
      tables.forEach(this::drop);
      drop(catalog);
      drop(table);
    }

    String quote(String table) {
      return engine.equals("postgres") ? '"' + table + '"' : '`' + table + '`';
    }

    /** Drops a table if it exists. */
    public void drop(String table) {
      String q = engine.equals("postgres") ? '"' + table + '"' : '`' + table + '`';
      try (Connection c = connect();
          Statement st = c.createStatement()) {
        st.execute("DROP TABLE IF EXISTS " + q);
      } catch (SQLException e) {
        throw new IllegalStateException("cannot drop test table " + table, e);
      }
    }
  }

  /** The catalog table listing the keyspaces of the store at {@code table}. */
  static String catalogOf(String table) {
    return Keyspaces.catalogFor(table);
  }

  static String setting(String server, String key, String dflt) {
    String p = System.getProperty("kv4j.test." + server + "." + key);
    if (p != null) {
      return p;
    }
    String e =
        System.getenv(
            ("KV4J_TEST_" + server + "_" + key).toUpperCase(Locale.ROOT).replace('-', '_'));
    return e != null ? e : dflt;
  }

  /** PostgreSQL settings. */
  public static Server postgres() {
    return server("postgres", "pg", 5432);
  }

  /** MariaDB/MySQL settings. */
  public static Server mysql() {
    return server("mysql", "mysql", 3306);
  }

  private static Server server(String engine, String name, int port) {
    return new Server(
        engine,
        setting(name, "host", "127.0.0.1"),
        Integer.parseInt(setting(name, "port", Integer.toString(port))),
        setting(name, "user", "kv4j"),
        setting(name, "password", "kv4j"),
        setting(name, "database", "kv4j"));
  }

  static boolean required() {
    return "true".equalsIgnoreCase(System.getenv("CI"))
        || Boolean.getBoolean("kv4j.test.requireServers");
  }

  /** Skips (or, in CI, fails) unless the server answers a login. */
  public static Server require(Server s) {
    try (Connection c = s.connect()) {
      if (!c.isValid(3)) {
        throw new SQLException("connection not valid");
      }
      return s;
    } catch (SQLException e) {
      String msg =
          s.engine()
              + " server not reachable at "
              + s.host()
              + ":"
              + s.port()
              + " as "
              + s.user()
              + "/"
              + s.database()
              + " ("
              + e.getMessage()
              + "). Start the test servers with `sudo .ci/servers.sh` (Debian; installs and starts"
              + " PostgreSQL, MariaDB and Redis on loopback) or point kv4j.test.*  properties at"
              + " yours.";
      if (required()) {
        Assertions.fail(msg + " CI=true: server tests must run.");
      }
      skip(msg);
      return s;
    }
  }

  /**
   * Restarts a test server with {@code .ci/servers.sh restart NAME}; skips (fails in CI) when the
   * script cannot be run here (it needs root).
   */
  public static void restart(String name) throws Exception {
    Path script = Path.of("..", ".ci", "servers.sh").toAbsolutePath().normalize();
    boolean root = "root".equals(System.getProperty("user.name"));
    if (!Files.isRegularFile(script) || !root) {
      String msg =
          "cannot restart " + name + ": needs root and " + script + " (run the tests as root)";
      if (required()) {
        Assertions.fail(msg);
      }
      skip(msg);
    }
    Process p =
        new ProcessBuilder("bash", script.toString(), "restart", name)
            .redirectErrorStream(true)
            .start();
    String out =
        new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
      Assertions.fail("restart " + name + " failed: " + out);
    }
  }

  private static final java.util.Set<String> SHOWN =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  /**
   * Skips the calling test with the reason, and prints the reason once on the console: a skipped
   * test class shows only "Tests run: 0" there, and the reason would otherwise be in the XML only.
   */
  private static void skip(String msg) {
    if (SHOWN.add(msg)) {
      System.err.println("[kv4j] SKIPPED server tests: " + msg);
    }
    Assumptions.abort(msg);
  }
}
