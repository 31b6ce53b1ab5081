package io.kv4j.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import io.kv4j.StoreException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreLockedException;
import io.kv4j.spi.LockKeeper;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a store and its keyspace handles share on the server: the connection pool, the store's
 * exclusive lock held by a dedicated session (kept alive by a {@link LockKeeper}, taken again after
 * a server restart) and the retry counters.
 */
final class SqlServer {
  /** How often the lock's session is checked and, after a server restart, the lock taken again. */
  private static final Duration KEEP_PERIOD = Duration.ofSeconds(1);

  final Dialect dialect;
  final JdbcSettings settings;

  /** Where the store is, for messages: {@code scheme://host:port/database/table (store path p)}. */
  final String location;

  final HikariDataSource pool;
  final AtomicLong retries = new AtomicLong();
  private final AtomicLong lockReconnects = new AtomicLong();
  private final boolean exclusive;
  private final Object lockGuard = new Object();
  private final LockKeeper keeper;
  private Connection lockConnection; // guarded by lockGuard
  private volatile boolean lockLost;

  private SqlServer(
      Dialect dialect,
      JdbcSettings settings,
      String location,
      Connection lockConnection,
      HikariDataSource pool,
      boolean exclusive) {
    this.dialect = dialect;
    this.settings = settings;
    this.location = location;
    this.lockConnection = lockConnection;
    this.pool = pool;
    this.exclusive = exclusive;
    this.keeper =
        LockKeeper.start(
            "server lock of " + dialect.id() + " table " + settings.table(),
            KEEP_PERIOD,
            this::keepLock);
  }

  /**
   * Connects, checks the server's durability settings, takes the store's lock (unless {@code
   * exclusive} is false: tests only), creates the store's table if missing and allowed, and opens
   * the pool.
   */
  static SqlServer open(Dialect d, StoreConfig config, JdbcSettings s, boolean exclusive) {
    String location =
        d.scheme()
            + "://"
            + s.address()
            + "/"
            + s.database()
            + "/"
            + s.table()
            + " (store path "
            + config.path()
            + ")";
    String who = "engine '" + d.id() + "' at " + location;
    Connection lock;
    try {
      lock = connect(d, s);
    } catch (SQLException e) {
      throw new StoreIOException(
          who
              + ": cannot connect to "
              + s.address()
              + " as user '"
              + s.user()
              + "', database '"
              + s.database()
              + "': "
              + e.getMessage()
              + " (is the server running? for tests run .ci/servers.sh)",
          e);
    }
    boolean ok = false;
    try {
      if (s.verifyDurability()) {
        String why = d.checkDurability(lock, config.durability());
        if (why != null) {
          throw new StoreIOException(who + ": " + why, (Throwable) null);
        }
      }
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(s.lockWaitMillis());
      while (exclusive && !d.tryLock(lock, s.table())) {
        if (System.nanoTime() - deadline > 0) {
          throw new StoreLockedException(
              who + " is open in another session (server lock on table " + s.table() + " held)",
              config.path());
        }
        pause(100);
      }
      if (!d.tableExists(lock, s.table())) {
        if (config.readOnly() || !config.createIfMissing()) {
          throw new StoreIOException(
              who
                  + ": table "
                  + s.table()
                  + " does not exist and "
                  + (config.readOnly()
                      ? "the store is opened read-only"
                      : "create-if-missing=false"),
              (Throwable) null);
        }
        Dialect.execute(lock, d.createTable(s.table()));
      }
      HikariDataSource pool = pool(d, s, config.durability());
      SqlServer server = new SqlServer(d, s, location, lock, pool, exclusive);
      ok = true;
      return server;
    } catch (SQLException e) {
      throw new StoreIOException(
          who + ": opening failed on " + s.address() + ": " + e.getMessage(), e);
    } catch (RuntimeException e) {
      if (e instanceof StoreException || e instanceof IllegalArgumentException) {
        throw e;
      }
      throw new StoreIOException(
          who + ": opening failed on " + s.address() + ": " + e.getMessage(), e);
    } finally {
      if (!ok) {
        closeQuietly(lock);
      }
    }
  }

  /** Whether this store holds the server lock (false only for the tests' second session). */
  boolean exclusive() {
    return exclusive;
  }

  /** A new connection outside the pool (the lock's session, a snapshot's). */
  Connection connect() throws SQLException {
    return connect(dialect, settings);
  }

  private static Connection connect(Dialect d, JdbcSettings s) throws SQLException {
    Properties p = new Properties();
    p.setProperty("user", s.user());
    p.setProperty("password", s.password());
    return DriverManager.getConnection(d.jdbcUrl(s), p);
  }

  private static HikariDataSource pool(Dialect d, JdbcSettings s, Durability durability) {
    HikariConfig hc = new HikariConfig();
    hc.setPoolName("kv4j-" + d.id() + "-" + s.table());
    hc.setJdbcUrl(d.jdbcUrl(s));
    hc.setUsername(s.user());
    hc.setPassword(s.password());
    hc.setMaximumPoolSize(s.poolSize());
    hc.setMinimumIdle(Math.min(2, s.poolSize()));
    hc.setConnectionTimeout(s.connectTimeoutMillis());
    hc.setValidationTimeout(Math.max(250, Math.min(1000, s.connectTimeoutMillis() - 1)));
    hc.setInitializationFailTimeout(-1); // the lock connection already proved the server answers
    hc.setAutoCommit(true);
    String init = d.connectionInitSql(durability);
    if (init != null) {
      hc.setConnectionInitSql(init);
    }
    return new HikariDataSource(hc);
  }

  /**
   * Throws if another session took the lock while the server was unreachable.
   *
   * @param describe the store, for the message
   */
  void checkLock(String describe) {
    if (lockLost) {
      throw new StoreIOException(
          describe
              + ": lost the server lock on table "
              + settings.table()
              + " while the server was unreachable, and another session took it; close and reopen",
          (Throwable) null);
    }
  }

  /** Adds the pool's and the lock's figures. */
  void figures(Map<String, Number> figures) {
    HikariPoolMXBean mx = pool.getHikariPoolMXBean();
    if (mx != null) {
      figures.put("pool.active", mx.getActiveConnections());
      figures.put("pool.idle", mx.getIdleConnections());
    }
    figures.put("retries", retries.get());
    figures.put("lock.reconnects", lockReconnects.get());
  }

  /** Every second: if the lock's session died (server restart), reconnect and take it again. */
  private void keepLock() {
    synchronized (lockGuard) {
      if (!exclusive || lockConnection == null || lockLost) {
        return;
      }
      try {
        if (lockConnection.isValid(2)) {
          return;
        }
      } catch (SQLException e) {
        // treated as invalid
      }
      Connection fresh = null;
      try {
        fresh = connect();
        if (dialect.tryLock(fresh, settings.table())) {
          closeQuietly(lockConnection);
          lockConnection = fresh;
          fresh = null;
          lockReconnects.incrementAndGet();
        } else {
          lockLost = true;
        }
      } catch (SQLException e) {
        // Server still unreachable: try again on the next tick.
      } finally {
        closeQuietly(fresh);
      }
    }
  }

  /** Stops the keeper, closes the pool, releases the lock and closes its session. */
  void close() {
    keeper.close(); // waits for a check in progress: none runs after this
    try {
      pool.close();
    } finally {
      synchronized (lockGuard) {
        if (lockConnection != null) {
          try {
            if (exclusive) {
              dialect.unlock(lockConnection, settings.table());
            }
          } catch (SQLException ignored) {
            // Closing the session below releases the lock as well.
          }
          closeQuietly(lockConnection);
          lockConnection = null;
        }
      }
    }
  }

  // ------------------------------------------------------------------------------ helpers

  static void pause(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreIOException("interrupted while waiting to retry", e);
    }
  }

  static void rollbackQuietly(Connection c) {
    try {
      c.rollback();
    } catch (SQLException ignored) {
      // The connection is broken or closed; the server rolls back on its own.
    }
  }

  static void closeQuietly(AutoCloseable c) {
    if (c != null) {
      try {
        c.close();
      } catch (Exception ignored) {
        // Nothing left to release.
      }
    }
  }
}
