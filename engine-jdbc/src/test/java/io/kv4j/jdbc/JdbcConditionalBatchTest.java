package io.kv4j.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Conditional batches across two store objects on one table — two pools, two sets of server
 * sessions, as two application instances sharing a store: what the kit (one store object) does not
 * reach. Each test races {@code writeIf} on one object against writes of the other.
 */
class JdbcConditionalBatchTest {
  /** Generous deadline for work on other threads; never a measure of speed. */
  private static final long DEADLINE_SECONDS = 300;

  @TempDir Path dir;
  private final List<Runnable> cleanup = new ArrayList<>();
  private final ExecutorService pool = Executors.newCachedThreadPool();

  @AfterEach
  void clean() throws InterruptedException {
    pool.shutdownNow();
    pool.awaitTermination(DEADLINE_SECONDS, TimeUnit.SECONDS);
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

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] counter(long n) {
    return ByteBuffer.allocate(8).putLong(n).array();
  }

  private static long count(byte[] v) {
    return ByteBuffer.wrap(v).getLong();
  }

  /** Runs the tasks on threads of their own, released together; their results in task order. */
  private <T> List<T> together(List<Callable<T>> tasks) throws Exception {
    CyclicBarrier start = new CyclicBarrier(tasks.size());
    List<Future<T>> running = new ArrayList<>();
    for (Callable<T> task : tasks) {
      running.add(
          pool.submit(
              () -> {
                start.await(DEADLINE_SECONDS, TimeUnit.SECONDS);
                return task.call();
              }));
    }
    List<T> results = new ArrayList<>();
    for (Future<T> f : running) {
      results.add(f.get(DEADLINE_SECONDS, TimeUnit.SECONDS));
    }
    return results;
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgres", "mysql"})
  void writeIf_transfersFromTwoStoreObjects_conserveMoneyAndCountEveryTransfer(String engine)
      throws Exception {
    StoreConfig c = config(engine, dir.resolve("bank"));
    int accounts = 4;
    long initial = 1_000_000;
    int threadsPerStore = 2;
    int perThread = 60;
    long seed = System.nanoTime();
    byte[] transfers = b("transfers");
    try (Store first = Stores.open(c);
        Store second = SecondSession.open(c)) {
      assertThat(first.info().features()).contains(Feature.CONDITIONAL_BATCH);
      WriteBatch setup = new WriteBatch().put(transfers, counter(0));
      for (int a = 0; a < accounts; a++) {
        setup.put(b("account" + a), counter(initial));
      }
      first.write(setup);
      AtomicLong retries = new AtomicLong();
      List<Callable<Void>> threads = new ArrayList<>();
      for (int t = 0; t < 2 * threadsPerStore; t++) {
        Store s = t % 2 == 0 ? first : second;
        SplittableRandom rnd = new SplittableRandom(seed + t);
        threads.add(
            () -> {
              for (int i = 0; i < perThread; i++) {
                int from = rnd.nextInt(accounts);
                int to = (from + 1 + rnd.nextInt(accounts - 1)) % accounts;
                long amount = 1 + rnd.nextInt(100);
                byte[] fk = b("account" + from);
                byte[] tk = b("account" + to);
                while (true) {
                  byte[] f = s.get(fk);
                  byte[] g = s.get(tk);
                  byte[] n = s.get(transfers);
                  WriteBatch tx =
                      new WriteBatch()
                          .expect(fk, f)
                          .expect(tk, g)
                          .expect(transfers, n)
                          .put(fk, counter(count(f) - amount))
                          .put(tk, counter(count(g) + amount))
                          .put(transfers, counter(count(n) + 1));
                  if (s.writeIf(tx)) {
                    break;
                  }
                  retries.incrementAndGet();
                }
              }
              return null;
            });
      }
      together(threads);
      long total = 0;
      for (int a = 0; a < accounts; a++) {
        total += count(second.get(b("account" + a)));
      }
      String what = "seed " + seed + ", " + retries.get() + " retries";
      assertThat(total).as("money across two store objects, " + what).isEqualTo(accounts * initial);
      assertThat(count(first.get(transfers)))
          .as("transfers counted, " + what)
          .isEqualTo(2L * threadsPerStore * perThread);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgres", "mysql"})
  void writeIf_expectAbsentRacingOnFreshKeys_hasExactlyOneWinner(String engine) throws Exception {
    StoreConfig c = config(engine, dir.resolve("claims"));
    int rounds = 40;
    try (Store first = Stores.open(c);
        Store second = SecondSession.open(c)) {
      // Three writeIf claimants on both objects and a putIfAbsent (another statement path).
      Store[] claimants = {first, second, first, second};
      for (int r = 0; r < rounds; r++) {
        byte[] k = b("claim" + r);
        List<Callable<Boolean>> tasks = new ArrayList<>();
        for (int t = 0; t < claimants.length; t++) {
          Store s = claimants[t];
          byte[] id = b("thread" + t);
          tasks.add(
              t == 3
                  ? () -> s.putIfAbsent(k, id)
                  : () -> s.writeIf(new WriteBatch().expectAbsent(k).put(k, id)));
        }
        List<Boolean> won = together(tasks);
        assertThat(won.stream().filter(w -> w).count())
            .as("round %d: winners among %s", r, won)
            .isEqualTo(1);
        assertThat(second.get(k))
            .as("round %d: the key holds the winner's value", r)
            .isEqualTo(b("thread" + won.indexOf(true)));
      }
    }
  }

  /**
   * A plain write racing a writeIf on a condition key either comes before the check (the batch
   * fails) or waits for the commit (and overwrites): both leave the plain write's result. Had it
   * slipped between the check and the commit, the batch's put would be the final value. A second
   * observation: the plain writer reads the batch's other key right after its put; if the batch
   * succeeded (so it ran before the put), its effect must be visible then.
   */
  @ParameterizedTest
  @ValueSource(strings = {"postgres", "mysql"})
  void writeIf_racingPlainPutsAndDeletesOnConditionKeys_neverLetsOneSlipIn(String engine)
      throws Exception {
    StoreConfig c = config(engine, dir.resolve("slip"));
    int rounds = 60;
    try (Store first = Stores.open(c);
        Store second = SecondSession.open(c)) {
      for (int r = 0; r < rounds; r++) {
        byte[] absent = b("absent" + r);
        together(
            List.of(
                () -> first.writeIf(new WriteBatch().expectAbsent(absent).put(absent, b("w"))),
                () -> {
                  second.put(absent, b("p"));
                  return false;
                }));
        assertThat(second.get(absent))
            .as("round %d: a put racing writeIf(expectAbsent) is the final value", r)
            .isEqualTo(b("p"));

        byte[] present = b("present" + r);
        byte[] witness = b("witness" + r);
        second.put(present, b("v0"));
        List<Boolean> seen =
            together(
                List.of(
                    () ->
                        first.writeIf(
                            new WriteBatch()
                                .expect(present, b("v0"))
                                .put(present, b("w"))
                                .put(witness, b("w"))),
                    () -> {
                      second.delete(present);
                      return second.get(witness) != null;
                    }));
        assertThat(second.get(present))
            .as("round %d: a delete racing writeIf(expect) leaves the key absent", r)
            .isNull();
        assertThat(!seen.get(0) || seen.get(1))
            .as(
                "round %d: the batch answered true, so it ran before the delete, whose writer must"
                    + " then see its other put",
                r)
            .isTrue();
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgres", "mysql"})
  void writeIf_crossedConditionsAndPuts_oneOfEachPairApplies(String engine) throws Exception {
    StoreConfig c = config(engine, dir.resolve("crossed"));
    int rounds = 8;
    try (Store first = Stores.open(c);
        Store second = SecondSession.open(c)) {
      for (int r = 0; r < rounds; r++) {
        byte[] a = b("a" + r);
        byte[] bk = b("b" + r);
        first.write(new WriteBatch().put(a, b("a0")).put(bk, b("b0")));
        // Each locks its condition key, then writes the other's: a deadlock when they interleave,
        // which the server breaks by rolling one back and the engine runs again.
        List<Boolean> won =
            together(
                List.of(
                    () -> first.writeIf(new WriteBatch().expect(a, b("a0")).put(bk, b("x"))),
                    () -> second.writeIf(new WriteBatch().expect(bk, b("b0")).put(a, b("y")))));
        assertThat(won)
            .as("round %d: exactly one of the crossed batches applies", r)
            .containsOnlyOnce(true);
        assertThat(List.of(first.get(a), first.get(bk)))
            .as("round %d: its write only", r)
            .containsExactlyElementsOf(
                won.get(0) ? List.of(b("a0"), b("x")) : List.of(b("y"), b("b0")));
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgres", "mysql"})
  void writeIf_absentConditionKeys_leaveNoRowAnyoneSees(String engine) throws Exception {
    TestServers.Server server = server(engine);
    StoreConfig c = config(engine, dir.resolve("placeholder"));
    byte[] k = b("never");
    int rounds = 200;
    try (Store first = Stores.open(c);
        Store second = SecondSession.open(c)) {
      AtomicBoolean writing = new AtomicBoolean(true);
      Future<Long> reader =
          pool.submit(
              () -> {
                long reads = 0;
                while (writing.get()) {
                  assertThat(second.get(k))
                      .as("read #%d of a key only conditions name", reads)
                      .isNull();
                  reads++;
                }
                return reads;
              });
      try {
        for (int i = 0; i < rounds; i++) {
          assertThat(first.writeIf(new WriteBatch().expectAbsent(k).put(b("y"), b("" + i))))
              .isTrue();
          assertThat(first.writeIf(new WriteBatch().expectAbsent(k).expect(b("y"), b("no"))))
              .isFalse();
        }
      } finally {
        writing.set(false);
      }
      assertThat(reader.get(DEADLINE_SECONDS, TimeUnit.SECONDS)).isPositive();
      assertThat(first.writeIf(new WriteBatch().expectAbsent(k).delete(k))).isTrue();
    }
    try (Connection conn = server.connect();
        Statement st = conn.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT COUNT(*) FROM "
                    + server.quote(JdbcSettings.tableFor(dir.resolve("placeholder"))))) {
      rs.next();
      assertThat(rs.getLong(1)).as("rows in the table: y only").isEqualTo(1);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgres", "mysql"})
  void writeIf_keyspaceConditions_neverCreateOneAndSeeAnotherObjectsNewOne(String engine) {
    StoreConfig c = config(engine, dir.resolve("spaces"));
    try (Store first = Stores.open(c);
        Store second = SecondSession.open(c)) {
      assertThat(first.writeIf(new WriteBatch().expectAbsent("ghost", b("k")).put(b("x"), b("1"))))
          .as("an absent keyspace holds no key")
          .isTrue();
      assertThat(first.writeIf(new WriteBatch().expect("ghost", b("k"), new byte[0])))
          .as("not even an empty value")
          .isFalse();
      assertThat(first.keyspaces()).as("conditions create no keyspace").isEmpty();
      assertThat(second.keyspaces()).isEmpty();
      second.keyspace("late").put(b("k"), b("v"));
      assertThat(first.writeIf(new WriteBatch().expect("late", b("k"), b("v")).put(b("x"), b("2"))))
          .as("a keyspace another store object created, in its own table")
          .isTrue();
      assertThat(first.writeIf(new WriteBatch().expectAbsent("late", b("k")).put(b("x"), b("3"))))
          .isFalse();
      assertThat(second.get(b("x"))).isEqualTo(b("2"));
    }
  }
}
