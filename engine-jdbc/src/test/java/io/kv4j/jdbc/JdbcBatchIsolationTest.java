package io.kv4j.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A batch takes effect at one instant also when it deletes a key that is absent: on PostgreSQL a
 * {@code DELETE} that finds no row locks nothing, so without the batch's own lock on that key a
 * plain put of it could commit in the middle of the batch, and the batch would be neither before
 * the put (its delete would have removed the put's value) nor after it (its delete saw no value).
 * Rule 19.3's history check found this on PostgreSQL; this test makes the interleaving certain:
 * another session holds the row of the batch's other key, so the batch stops in the middle, and a
 * put of the deleted key must then wait for the batch.
 */
class JdbcBatchIsolationTest {
  private static final long DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(120);

  @TempDir Path dir;
  private final List<Runnable> cleanup = new ArrayList<>();
  private final ExecutorService pool = Executors.newCachedThreadPool();

  @AfterEach
  void clean() throws InterruptedException {
    pool.shutdownNow();
    pool.awaitTermination(120, TimeUnit.SECONDS);
    cleanup.forEach(Runnable::run);
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** Sessions of this database waiting for a lock now. */
  private static int lockWaiters(Connection c) throws SQLException {
    try (PreparedStatement st =
            c.prepareStatement(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                    + " AND datname = current_database()");
        ResultSet rs = st.executeQuery()) {
      rs.next();
      return rs.getInt(1);
    }
  }

  @Test
  void batchDeletingAnAbsentKey_stoppedMidway_makesAPutOfThatKeyWait() throws Exception {
    TestServers.Server server = TestServers.require(TestServers.postgres());
    Path path = dir.resolve("isolation");
    String table = JdbcSettings.tableFor(path);
    cleanup.add(() -> server.dropStore(table));
    StoreConfig c = server.apply(StoreConfig.builder("postgres")).path(path).build();
    byte[] absent = b("a-absent");
    byte[] held = b("z-held");
    try (Store store = Stores.open(c);
        Store second = SecondSession.open(c);
        Connection holder = server.connect();
        Connection watcher = server.connect()) {
      store.put(held, b("old"));
      holder.setAutoCommit(false);
      try (PreparedStatement lock =
          holder.prepareStatement(
              "SELECT v FROM "
                  + PostgresDialect.INSTANCE.quote(table)
                  + " WHERE k = ? FOR UPDATE")) {
        lock.setBytes(1, held);
        lock.executeQuery().close();
      }
      int before = lockWaiters(watcher);
      Future<?> batch =
          pool.submit(() -> store.write(new WriteBatch().delete(absent).put(held, b("batch"))));
      long deadline = System.nanoTime() + DEADLINE_NANOS;
      while (lockWaiters(watcher) < before + 1) {
        assertThat(batch.isDone()).as("the batch waits for the held row").isFalse();
        assertThat(System.nanoTime() - deadline).as("the batch waits for a lock").isNegative();
        LockSupport.parkNanos(1_000_000);
      }
      Future<?> put = pool.submit(() -> second.put(absent, b("put")));
      while (lockWaiters(watcher) < before + 2 && !put.isDone()) {
        assertThat(System.nanoTime() - deadline).as("the put waits or ends").isNegative();
        LockSupport.parkNanos(1_000_000);
      }
      assertThat(put.isDone())
          .as("a put of the key the stopped batch deletes must wait for the batch")
          .isFalse();
      holder.rollback();
      batch.get(120, TimeUnit.SECONDS);
      put.get(120, TimeUnit.SECONDS);
      assertThat(second.get(held)).isEqualTo(b("batch"));
      assertThat(second.get(absent))
          .as("the put, after the batch, is the key's value")
          .isEqualTo(b("put"));
    }
  }
}
