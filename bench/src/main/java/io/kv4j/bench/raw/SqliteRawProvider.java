package io.kv4j.bench.raw;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.kv4j.spi.OptionSpec;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * SQLite (sqlite-jdbc) used directly ({@code sqlite-raw}), with the settings of the kv4j {@code
 * sqlite} engine at its defaults: the same table ({@code k BLOB NOT NULL UNIQUE, v BLOB NOT NULL},
 * a rowid table), page size 8 KiB, WAL, {@code synchronous} FULL under SYNC and NORMAL under
 * BUFFERED, wal_autocheckpoint 1000, busy_timeout 5000, cache_size 8 MiB ({@code page-cache-size})
 * and mmap_size 256 MiB per connection. The usual JDBC code: one writer connection in auto-commit
 * mode (a transaction per put, no group commit) used under a lock, and one connection per reading
 * thread (WAL readers run in parallel), prepared statements cached.
 */
public final class SqliteRawProvider extends RawProvider {
  static final OptionSpec<Long> PAGE_CACHE_SIZE =
      OptionSpec.size("page-cache-size", 8L << 20, 64 << 10, 1L << 40, "cache_size per connection");

  /** Creates the provider; called by the bench's {@code Instruments} and the TCK's child JVMs. */
  public SqliteRawProvider() {
    super(
        "sqlite-raw",
        "Bench baseline: SQLite through sqlite-jdbc directly, the sqlite engine's settings.");
  }

  @Override
  public List<OptionSpec<?>> options() {
    return List.of(PAGE_CACHE_SIZE);
  }

  @Override
  public Store open(StoreConfig config) {
    try {
      return new RawSqlite(config);
    } catch (SQLException e) {
      throw new StoreIOException("sqlite-raw: cannot open " + config.path(), e);
    }
  }

  /** A connection with its prepared statements. */
  private static final class Conn {
    final Connection c;
    final PreparedStatement get;
    final PreparedStatement upsert;
    final PreparedStatement delete;
    final PreparedStatement scanFrom;
    final PreparedStatement scanAll;

    Conn(Path file, StoreConfig config) throws SQLException {
      c = DriverManager.getConnection("jdbc:sqlite:" + file);
      try (Statement s = c.createStatement()) {
        s.execute("PRAGMA page_size=8192");
        s.execute("PRAGMA journal_mode=WAL");
        s.execute(
            "PRAGMA synchronous=" + (config.durability() == Durability.SYNC ? "FULL" : "NORMAL"));
        s.execute("PRAGMA wal_autocheckpoint=1000");
        s.execute("PRAGMA busy_timeout=5000");
        s.execute("PRAGMA cache_size=-" + (config.get(PAGE_CACHE_SIZE) >> 10));
        s.execute("PRAGMA mmap_size=" + (256L << 20));
        s.execute(
            "CREATE TABLE IF NOT EXISTS kv(k BLOB NOT NULL UNIQUE CHECK (typeof(k) = 'blob'),"
                + " v BLOB NOT NULL CHECK (typeof(v) = 'blob'))");
      }
      get = c.prepareStatement("SELECT v FROM kv WHERE k = ?");
      upsert =
          c.prepareStatement(
              "INSERT INTO kv(k, v) VALUES(?, ?) ON CONFLICT(k) DO UPDATE SET v = excluded.v");
      delete = c.prepareStatement("DELETE FROM kv WHERE k = ?");
      scanFrom = c.prepareStatement("SELECT k, v FROM kv WHERE k >= ? ORDER BY k ASC LIMIT ?");
      scanAll = c.prepareStatement("SELECT k, v FROM kv ORDER BY k ASC LIMIT ?");
    }
  }

  private static final class RawSqlite implements Store {
    private final StoreConfig config;
    private final Path file;
    private final Conn writer;
    private final ConcurrentLinkedQueue<Conn> all = new ConcurrentLinkedQueue<>();
    private final ThreadLocal<Conn> readers;

    RawSqlite(StoreConfig config) throws SQLException {
      this.config = config;
      this.file = Raw.directory(config.path(), "sqlite-raw").resolve("kv.sqlite");
      writer = new Conn(file, config);
      all.add(writer);
      readers =
          ThreadLocal.withInitial(
              () -> {
                try {
                  Conn c = new Conn(file, config);
                  all.add(c);
                  return c;
                } catch (SQLException e) {
                  throw new StoreIOException("sqlite-raw: cannot open a reader", e);
                }
              });
    }

    @Override
    public byte[] get(byte[] key) {
      Conn c = readers.get();
      try {
        c.get.setBytes(1, key);
        try (ResultSet rs = c.get.executeQuery()) {
          return rs.next() ? rs.getBytes(1) : null;
        }
      } catch (SQLException e) {
        throw new StoreIOException("sqlite-raw get", e);
      }
    }

    @Override
    public void put(byte[] key, byte[] value) {
      synchronized (writer) {
        try {
          writer.upsert.setBytes(1, key);
          writer.upsert.setBytes(2, value);
          writer.upsert.executeUpdate();
        } catch (SQLException e) {
          throw new StoreIOException("sqlite-raw put", e);
        }
      }
    }

    @Override
    public void delete(byte[] key) {
      synchronized (writer) {
        try {
          writer.delete.setBytes(1, key);
          writer.delete.executeUpdate();
        } catch (SQLException e) {
          throw new StoreIOException("sqlite-raw delete", e);
        }
      }
    }

    @Override
    public Cursor scan(KeyRange range) {
      Conn c = readers.get();
      ResultSet rs;
      try {
        PreparedStatement ps;
        if (range.lower() == null) {
          ps = c.scanAll;
          ps.setLong(1, range.limitValue());
        } else {
          ps = c.scanFrom;
          ps.setBytes(1, range.lower());
          // one more row: an exclusive lower bound skips the bound itself
          ps.setLong(2, range.limitValue() == Long.MAX_VALUE ? -1 : range.limitValue() + 1);
        }
        rs = ps.executeQuery();
      } catch (SQLException e) {
        throw new StoreIOException("sqlite-raw scan", e);
      }
      return new RawCursor(range) {
        @Override
        Entry fetch() {
          try {
            return rs.next() ? new Entry(rs.getBytes(1), rs.getBytes(2)) : null;
          } catch (SQLException e) {
            throw new StoreIOException("sqlite-raw scan", e);
          }
        }

        @Override
        void release() {
          try {
            rs.close();
          } catch (SQLException e) {
            throw new StoreIOException("sqlite-raw scan close", e);
          }
        }
      };
    }

    @Override
    public void write(WriteBatch batch) {
      synchronized (writer) {
        try {
          writer.c.setAutoCommit(false);
          try {
            for (int i = 0; i < batch.size(); i++) {
              if (batch.isDelete(i)) {
                writer.delete.setBytes(1, batch.key(i));
                writer.delete.executeUpdate();
              } else {
                writer.upsert.setBytes(1, batch.key(i));
                writer.upsert.setBytes(2, batch.value(i));
                writer.upsert.executeUpdate();
              }
            }
            writer.c.commit();
          } catch (SQLException | RuntimeException e) {
            writer.c.rollback();
            throw e;
          } finally {
            writer.c.setAutoCommit(true);
          }
        } catch (SQLException e) {
          throw new StoreIOException("sqlite-raw write", e);
        }
      }
    }

    @Override
    public void sync() {
      synchronized (writer) {
        try (Statement s = writer.c.createStatement()) {
          s.execute("PRAGMA wal_checkpoint(PASSIVE)");
        } catch (SQLException e) {
          throw new StoreIOException("sqlite-raw sync", e);
        }
      }
    }

    @Override
    public StoreInfo info() {
      return RawProvider.info("sqlite-raw", config);
    }

    @Override
    public StoreStats stats() {
      return new StoreStats(0, false, Raw.du(config.path()), Map.of());
    }

    @Override
    public void close() {
      for (Conn c : all) {
        try {
          c.c.close();
        } catch (SQLException e) {
          // closing anyway
        }
      }
    }
  }
}
