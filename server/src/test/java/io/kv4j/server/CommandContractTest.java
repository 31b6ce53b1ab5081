package io.kv4j.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.RedisProtocol;
import redis.clients.jedis.Response;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.params.SetParams;
import redis.clients.jedis.resps.ScanResult;

/** Every supported command through Jedis, against one engine; subclasses choose the engine. */
abstract class CommandContractTest {
  @TempDir Path dir;
  TestServer server;
  Jedis jedis;

  abstract String uri(Path directory);

  @BeforeEach
  void start() throws Exception {
    server = new TestServer(uri(dir));
    jedis = new Jedis("127.0.0.1", server.port(), 30_000);
  }

  @AfterEach
  void stop() {
    if (jedis != null) {
      jedis.close();
    }
    if (server != null) {
      server.close();
    }
  }

  Object call(String command, String... args) {
    return jedis.sendCommand(() -> command.getBytes(StandardCharsets.UTF_8), args);
  }

  @Test
  void pingEcho_replyAsRedis() {
    assertThat(jedis.ping()).isEqualTo("PONG");
    assertThat(jedis.ping("hello")).isEqualTo("hello");
    assertThat(jedis.echo("a b\r\nc")).isEqualTo("a b\r\nc");
  }

  @Test
  void setGet_roundTripsBinarySafeValues() {
    byte[] key = {0, (byte) 0xFF, '\r', '\n'};
    byte[] value = new byte[100_000];
    for (int i = 0; i < value.length; i++) {
      value[i] = (byte) (i * 31);
    }
    assertThat(jedis.set(key, value)).isEqualTo("OK");
    assertThat(jedis.get(key)).isEqualTo(value);
    assertThat(jedis.set("empty", "")).isEqualTo("OK");
    assertThat(jedis.get("empty")).isEmpty();
    assertThat(jedis.get("missing")).isNull();
  }

  @Test
  void setNxXxGet_followRedisRules() {
    assertThat(jedis.set("k", "1", SetParams.setParams().xx())).isNull();
    assertThat(jedis.get("k")).isNull();
    assertThat(jedis.set("k", "1", SetParams.setParams().nx())).isEqualTo("OK");
    assertThat(jedis.set("k", "2", SetParams.setParams().nx())).isNull();
    assertThat(jedis.get("k")).isEqualTo("1");
    assertThat(jedis.set("k", "3", SetParams.setParams().xx())).isEqualTo("OK");
    assertThat(jedis.setGet("k", "4")).isEqualTo("3");
    assertThat(jedis.get("k")).isEqualTo("4");
    assertThat(call("SETNX", "k", "5")).isEqualTo(0L);
    assertThat(call("SETNX", "k2", "5")).isEqualTo(1L);
  }

  @Test
  void setWithExpiry_isRejectedWithAClearError() {
    assertThatThrownBy(() -> jedis.set("k", "v", SetParams.setParams().ex(10)))
        .isInstanceOf(JedisDataException.class)
        .hasMessageContaining("SET EX is not supported")
        .hasMessageContaining("no key expiry");
    assertThatThrownBy(() -> jedis.set("k", "v", SetParams.setParams().px(10)))
        .hasMessageContaining("SET PX is not supported");
    assertThat(jedis.exists("k")).isFalse();
    assertThatThrownBy(() -> jedis.sendCommand(() -> "SET".getBytes(), "k", "v", "BOGUS"))
        .hasMessageContaining("syntax error");
  }

  @Test
  void getsetGetdel_returnOldValues() {
    assertThat(call("GETSET", "k", "a")).isNull();
    assertThat(call("GETSET", "k", "b")).isEqualTo("a".getBytes(StandardCharsets.UTF_8));
    assertThat(jedis.getDel("k")).isEqualTo("b");
    assertThat(jedis.getDel("k")).isNull();
    assertThat(jedis.exists("k")).isFalse();
  }

  @Test
  void delExistsType_countKeys() {
    jedis.mset("a", "1", "b", "2", "c", "3");
    assertThat(jedis.exists("a", "b", "x", "a")).isEqualTo(3);
    assertThat(jedis.type("a")).isEqualTo("string");
    assertThat(jedis.type("x")).isEqualTo("none");
    assertThat(jedis.del("a", "b", "x", "a")).isEqualTo(2);
    assertThat(jedis.exists("a")).isFalse();
    assertThat(jedis.unlink("c")).isEqualTo(1);
  }

  @Test
  void msetMget_writeAndReadManyKeys() {
    assertThat(jedis.mset("k1", "v1", "k2", "v2", "k1", "v3")).isEqualTo("OK");
    assertThat(jedis.mget("k1", "k2", "nope")).containsExactly("v3", "v2", null);
    assertThat(jedis.msetnx("k2", "x", "k9", "y")).isZero();
    assertThat(jedis.exists("k9")).isFalse();
    assertThat(jedis.msetnx("k8", "x", "k9", "y")).isOne();
    assertThat(jedis.mget("k8", "k9")).containsExactly("x", "y");
    assertThatThrownBy(() -> jedis.sendCommand(() -> "MSET".getBytes(), "a", "1", "b"))
        .hasMessageContaining("wrong number of arguments for 'mset'");
  }

  @Test
  void strlenAppend_workOnBytes() {
    assertThat(jedis.strlen("s")).isZero();
    assertThat(jedis.append("s", "hello")).isEqualTo(5);
    assertThat(jedis.append("s", " world")).isEqualTo(11);
    assertThat(jedis.get("s")).isEqualTo("hello world");
    assertThat(jedis.strlen("s")).isEqualTo(11);
  }

  @Test
  void incrDecr_countAndRejectNonIntegers() {
    assertThat(jedis.incr("n")).isEqualTo(1);
    assertThat(jedis.incrBy("n", 41)).isEqualTo(42);
    assertThat(jedis.decr("n")).isEqualTo(41);
    assertThat(jedis.decrBy("n", 50)).isEqualTo(-9);
    assertThat(jedis.get("n")).isEqualTo("-9");
    jedis.set("n", String.valueOf(Long.MAX_VALUE));
    assertThatThrownBy(() -> jedis.incr("n")).hasMessageContaining("would overflow");
    jedis.set("s", "12a");
    assertThatThrownBy(() -> jedis.incr("s")).hasMessageContaining("not an integer");
    jedis.set("s", " 1");
    assertThatThrownBy(() -> jedis.incr("s")).hasMessageContaining("not an integer");
    jedis.set("s", "-9223372036854775808");
    assertThat(jedis.incr("s")).isEqualTo(Long.MIN_VALUE + 1);
    assertThatThrownBy(() -> jedis.sendCommand(() -> "INCRBY".getBytes(), "n", "x"))
        .hasMessageContaining("not an integer");
  }

  @Test
  void scan_visitsEveryKeyOnceWithSmallCounts() {
    Set<String> written = new HashSet<>();
    for (int i = 0; i < 300; i++) {
      String k = (i % 3 == 0 ? "user:" : "item:") + i;
      jedis.set(k, "v");
      written.add(k);
    }
    jedis.set("u", "short"); // a key short enough to live in the cursor itself
    written.add("u");
    List<String> seen = new ArrayList<>();
    String cursor = ScanParams.SCAN_POINTER_START;
    int calls = 0;
    do {
      ScanResult<String> r = jedis.scan(cursor, new ScanParams().count(7));
      seen.addAll(r.getResult());
      assertThat(r.getResult()).hasSizeLessThanOrEqualTo(7);
      cursor = r.getCursor();
      calls++;
    } while (!cursor.equals("0"));
    assertThat(seen).doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(written);
    assertThat(calls).isGreaterThan(40);
  }

  @Test
  void scanMatch_filtersByGlobAndResumes() {
    for (int i = 0; i < 100; i++) {
      jedis.set("user:" + i, "v");
      jedis.set("item:" + i, "v");
    }
    List<String> seen = new ArrayList<>();
    String cursor = "0";
    do {
      ScanResult<String> r = jedis.scan(cursor, new ScanParams().match("user:1*").count(5));
      seen.addAll(r.getResult());
      cursor = r.getCursor();
    } while (!cursor.equals("0"));
    assertThat(seen).hasSize(11).allMatch(k -> k.startsWith("user:1"));
    assertThat(jedis.keys("item:?")).hasSize(10);
    assertThat(jedis.keys("*")).hasSize(200);
    assertThat(jedis.keys("[iu]*:9[0-2]")).hasSize(6);
  }

  @Test
  void scan_rejectsBadCursorsAndOptions() {
    assertThatThrownBy(() -> jedis.scan("abc")).hasMessageContaining("invalid cursor");
    assertThatThrownBy(() -> jedis.scan("18446744073709551615"))
        .hasMessageContaining("invalid cursor");
    assertThatThrownBy(() -> jedis.sendCommand(() -> "SCAN".getBytes(), "0", "COUNT", "0"))
        .hasMessageContaining("syntax error");
  }

  @Test
  void dbsizeFlushdb_countAndClear() {
    for (int i = 0; i < 2500; i++) {
      jedis.set("k" + i, "v");
    }
    assertThat(jedis.dbSize()).isEqualTo(2500);
    assertThat(jedis.flushDB()).isEqualTo("OK");
    assertThat(jedis.dbSize()).isZero();
    assertThat(jedis.keys("*")).isEmpty();
  }

  @Test
  void infoClientSelect_answerClients() {
    String info = jedis.info();
    assertThat(info).contains("redis_version:", "connected_clients:1", "engine:");
    assertThat(jedis.info("keyspace")).startsWith("# Keyspace").doesNotContain("# Server");
    assertThat(jedis.clientSetname("worker-1")).isEqualTo("OK");
    assertThat(jedis.clientGetname()).isEqualTo("worker-1");
    assertThat(jedis.clientId()).isPositive();
    assertThat(jedis.select(0)).isEqualTo("OK");
    if (!server.store.info().has(io.kv4j.Feature.KEYSPACES)) {
      assertThatThrownBy(() -> jedis.select(1))
          .hasMessageContaining("DB index is out of range")
          .hasMessageContaining("does not support KEYSPACES");
    }
    assertThatThrownBy(() -> jedis.select(-1)).hasMessageContaining("DB index is out of range");
    assertThatThrownBy(() -> jedis.select(Dataset.DATABASES))
        .hasMessageContaining("DB index is out of range");
  }

  @Test
  void select_isolatesDatabasesAsKeyspaces() {
    org.junit.jupiter.api.Assumptions.assumeTrue(
        server.store.info().has(io.kv4j.Feature.KEYSPACES), "engine without keyspaces");
    jedis.set("k", "zero");
    assertThat(jedis.select(1)).isEqualTo("OK");
    assertThat(jedis.get("k")).isNull();
    jedis.set("k", "one");
    jedis.set("only1", "x");
    assertThatThrownBy(() -> call("COPY", "only1", "c", "DB", "0"))
        .hasMessageContaining("another database");
    assertThat(jedis.get("k")).isEqualTo("one");
    assertThat(jedis.dbSize()).isEqualTo(2);
    assertThat(jedis.keys("*")).containsExactlyInAnyOrder("k", "only1");
    assertThat(jedis.clientInfo()).contains(" db=1 ");
    assertThat(jedis.info("keyspace")).contains("db0:keys=1", "db1:keys=2");
    assertThat(server.store.keyspaces()).contains("db1");

    try (Jedis other = new Jedis("127.0.0.1", server.port(), 30_000)) {
      assertThat(other.get("k")).isEqualTo("zero");
      assertThat(other.exists("only1")).isFalse();
      assertThat(other.select(1)).isEqualTo("OK");
      assertThat(other.get("k")).isEqualTo("one");
      assertThat(other.flushDB()).isEqualTo("OK");
      assertThat(other.dbSize()).isZero();
    }
    assertThat(jedis.get("only1")).isNull();
    assertThat(jedis.select(0)).isEqualTo("OK");
    assertThat(jedis.get("k")).isEqualTo("zero");
    assertThat(server.store.get("k".getBytes(StandardCharsets.UTF_8)))
        .isEqualTo("zero".getBytes(StandardCharsets.UTF_8));

    jedis.select(1);
    jedis.set("kept", "1");
    if (server.store.info().has(io.kv4j.Feature.PERSISTENT)) {
      jedis.close();
      server.close();
      server = new TestServer(uri(dir));
      jedis = new Jedis("127.0.0.1", server.port(), 30_000);
      assertThat(jedis.get("k")).isEqualTo("zero");
      assertThat(jedis.select(1)).isEqualTo("OK");
      assertThat(jedis.get("kept")).isEqualTo("1");
      assertThat(jedis.get("k")).isNull();
    }

    jedis.select(2);
    jedis.set("k", "two");
    assertThat(jedis.flushAll()).isEqualTo("OK");
    assertThat(jedis.dbSize()).isZero();
    jedis.select(0);
    assertThat(jedis.dbSize()).isZero();
  }

  @Test
  void select_isRefusedInsideMultiAndResetReturnsToDatabaseZero() {
    org.junit.jupiter.api.Assumptions.assumeTrue(
        server.store.info().has(io.kv4j.Feature.KEYSPACES), "engine without keyspaces");
    jedis.set("k", "zero");
    jedis.select(3);
    assertThat(call("MULTI")).isEqualTo("OK".getBytes(StandardCharsets.UTF_8));
    assertThatThrownBy(() -> call("SELECT", "0")).hasMessageContaining("one database");
    assertThatThrownBy(() -> call("EXEC")).hasMessageContaining("EXECABORT");
    assertThat(jedis.get("k")).isNull();
    call("RESET");
    assertThat(jedis.get("k")).isEqualTo("zero");
  }

  @Test
  void command_reportsTheCommandTable() {
    long count = (Long) jedis.sendCommand(() -> "COMMAND".getBytes(), "COUNT");
    assertThat(count).isGreaterThanOrEqualTo(30);
    List<?> all = (List<?>) jedis.sendCommand(() -> "COMMAND".getBytes());
    assertThat(all).hasSize((int) count);
    List<?> get =
        (List<?>) ((List<?>) jedis.sendCommand(() -> "COMMAND".getBytes(), "INFO", "get")).get(0);
    assertThat(new String((byte[]) get.get(0), StandardCharsets.UTF_8)).isEqualTo("get");
    assertThat(get.get(1)).isEqualTo(2L);
    assertThat((List<?>) jedis.sendCommand(() -> "COMMAND".getBytes(), "DOCS")).isEmpty();
  }

  @Test
  void unknownCommand_getsTheStandardError() {
    assertThatThrownBy(() -> jedis.sendCommand(() -> "FROB".getBytes(), "x", "y"))
        .isInstanceOf(JedisDataException.class)
        .hasMessage("ERR unknown command 'FROB', with args beginning with: 'x' 'y' ");
    assertThatThrownBy(() -> jedis.sendCommand(() -> "GET".getBytes()))
        .hasMessage("ERR wrong number of arguments for 'get' command");
    assertThat(jedis.ping()).isEqualTo("PONG");
  }

  @Test
  void pipeline_repliesInOrder() {
    Pipeline p = jedis.pipelined();
    List<Response<String>> gets = new ArrayList<>();
    for (int i = 0; i < 5000; i++) {
      p.set("p" + i, "v" + i);
      gets.add(p.get("p" + i));
    }
    p.sync();
    for (int i = 0; i < 5000; i++) {
      assertThat(gets.get(i).get()).isEqualTo("v" + i);
    }
  }

  @Test
  void resp3_helloSwitchesProtocolAndNullsStillWork() {
    try (Jedis j3 =
        new Jedis(
            "127.0.0.1",
            server.port(),
            DefaultJedisClientConfig.builder().protocol(RedisProtocol.RESP3).build())) {
      j3.set("a", "1");
      assertThat(j3.get("a")).isEqualTo("1");
      assertThat(j3.get("none")).isNull();
      assertThat(j3.mget("a", "none")).containsExactly("1", null);
      Map<String, String> cfg = new TreeMap<>(j3.configGet("appendonly"));
      assertThat(cfg).containsEntry("appendonly", "no");
      assertThat(j3.clientInfo()).contains("resp=3");
    }
  }

  // ---- transactions ----

  @Test
  void multiExec_runsQueuedCommandsInOrderAndSeesItsOwnWrites() {
    redis.clients.jedis.Transaction t = jedis.multi();
    Response<String> set = t.set("n", "10");
    Response<Long> incr = t.incrBy("n", 5);
    Response<String> get = t.get("n");
    Response<Long> del = t.del("gone");
    List<Object> results = t.exec();
    assertThat(results).hasSize(4);
    assertThat(set.get()).isEqualTo("OK");
    assertThat(incr.get()).isEqualTo(15L);
    assertThat(get.get()).isEqualTo("15");
    assertThat(del.get()).isZero();
    assertThat(jedis.get("n")).isEqualTo("15");
  }

  @Test
  void multiExec_errorsAtQueueTimeAbortAndRuntimeErrorsDoNot() {
    assertThat(text("MULTI")).isEqualTo("OK");
    assertThat(text("SET", "a", "1")).isEqualTo("QUEUED");
    assertThatThrownBy(() -> call("NOSUCHCOMMAND")).hasMessageStartingWith("ERR unknown command");
    assertThatThrownBy(() -> call("EXEC"))
        .hasMessage("EXECABORT Transaction discarded because of previous errors.");
    assertThat(jedis.exists("a")).isFalse();

    jedis.set("text", "abc");
    assertThat(text("MULTI")).isEqualTo("OK");
    assertThat(text("INCR", "text")).isEqualTo("QUEUED");
    assertThat(text("SET", "b", "2")).isEqualTo("QUEUED");
    List<?> results = (List<?>) call("EXEC");
    assertThat(results.get(0)).isInstanceOf(JedisDataException.class);
    assertThat(results.get(1)).isEqualTo("OK".getBytes(StandardCharsets.UTF_8));
    assertThat(jedis.get("b")).isEqualTo("2");

    assertThatThrownBy(() -> call("EXEC")).hasMessage("ERR EXEC without MULTI");
    assertThatThrownBy(() -> call("DISCARD")).hasMessage("ERR DISCARD without MULTI");
    assertThat(text("MULTI")).isEqualTo("OK");
    assertThatThrownBy(() -> call("MULTI")).hasMessage("ERR MULTI calls can not be nested");
    assertThatThrownBy(() -> call("WATCH", "x"))
        .hasMessage("ERR WATCH inside MULTI is not allowed");
    assertThat(text("SET", "c", "3")).isEqualTo("QUEUED");
    assertThat(text("DISCARD")).isEqualTo("OK");
    assertThat(jedis.exists("c")).isFalse();
    assertThat(text("MULTI")).isEqualTo("OK");
    assertThatThrownBy(() -> call("FLUSHALL")).hasMessageContaining("not supported inside MULTI");
    assertThatThrownBy(() -> call("EXEC")).hasMessageStartingWith("EXECABORT");
  }

  @Test
  void watch_abortsExecWhenAnotherClientWroteTheKey() {
    try (Jedis other = new Jedis("127.0.0.1", server.port(), 30_000)) {
      jedis.set("balance", "100");
      assertThat(jedis.watch("balance")).isEqualTo("OK");
      other.set("balance", "50");
      redis.clients.jedis.Transaction t = jedis.multi();
      t.set("balance", "200");
      assertThat(t.exec()).isNull();
      assertThat(jedis.get("balance")).isEqualTo("50");

      assertThat(jedis.watch("balance")).isEqualTo("OK");
      other.get("balance"); // a read does not touch the key
      redis.clients.jedis.Transaction u = jedis.multi();
      u.set("balance", "200");
      assertThat(u.exec()).hasSize(1);
      assertThat(jedis.get("balance")).isEqualTo("200");

      assertThat(jedis.watch("balance")).isEqualTo("OK");
      assertThat(jedis.unwatch()).isEqualTo("OK");
      other.set("balance", "1");
      redis.clients.jedis.Transaction v = jedis.multi();
      v.set("balance", "300");
      assertThat(v.exec()).hasSize(1);
    }
  }

  @Test
  void watchers_areCountedOnceAndForgottenByEveryWayAWatchEnds() throws Exception {
    WatchVersions versions = server.server.commands.data().versions;
    byte[] key = "w".getBytes(StandardCharsets.UTF_8);
    jedis.set("w", "1");
    long unwatched = versions.of(key);
    jedis.set("w", "2");
    assertThat(versions.of(key)).as("no watcher: a write bumps nothing").isEqualTo(unwatched);
    try (Jedis other = new Jedis("127.0.0.1", server.port(), 30_000)) {
      assertThat(jedis.watch("w", "x")).isEqualTo("OK");
      assertThat(jedis.watch("y")).isEqualTo("OK");
      assertThat(versions.watchers()).isEqualTo(1);
      other.set("w", "3");
      assertThat(versions.of(key)).as("watched: a write bumps").isNotEqualTo(unwatched);
      assertThat(jedis.unwatch()).isEqualTo("OK");
      assertThat(versions.watchers()).as("after UNWATCH").isZero();

      jedis.watch("w");
      redis.clients.jedis.Transaction t = jedis.multi();
      t.set("w", "4");
      assertThat(t.exec()).hasSize(1);
      assertThat(versions.watchers()).as("after EXEC").isZero();

      jedis.watch("w");
      redis.clients.jedis.Transaction d = jedis.multi();
      d.set("w", "5");
      assertThat(d.discard()).isEqualTo("OK");
      assertThat(versions.watchers()).as("after DISCARD").isZero();

      jedis.watch("w");
      assertThat(text("RESET")).isEqualTo("RESET");
      assertThat(versions.watchers()).as("after RESET").isZero();

      other.watch("w");
      jedis.watch("w");
      assertThat(versions.watchers()).isEqualTo(2);
    }
    TestServer.await(
        "the closed connection's watch to be forgotten", () -> versions.watchers() == 1);
    assertThat(jedis.unwatch()).isEqualTo("OK");
    assertThat(versions.watchers()).isZero();
  }

  private String text(String command, String... args) {
    Object o = call(command, args);
    return o instanceof byte[] b ? new String(b, StandardCharsets.UTF_8) : String.valueOf(o);
  }

  // ---- more string and keyspace commands ----

  @Test
  void getrangeSetrange_followRedisOffsets() {
    jedis.set("s", "Hello World");
    assertThat(jedis.getrange("s", 0, 4)).isEqualTo("Hello");
    assertThat(jedis.getrange("s", -5, -1)).isEqualTo("World");
    assertThat(jedis.getrange("s", -3, 100)).isEqualTo("rld");
    assertThat(jedis.getrange("s", 5, 2)).isEmpty();
    assertThat(jedis.getrange("nothing", 0, -1)).isEmpty();
    assertThat(jedis.setrange("s", 6, "Redis")).isEqualTo(11);
    assertThat(jedis.get("s")).isEqualTo("Hello Redis");
    assertThat(jedis.setrange("pad", 3, "x")).isEqualTo(4);
    assertThat(jedis.get("pad".getBytes(StandardCharsets.UTF_8)))
        .isEqualTo(new byte[] {0, 0, 0, 'x'});
    assertThat(jedis.setrange("none", 5, "")).isZero();
    assertThat(jedis.exists("none")).isFalse();
    assertThatThrownBy(() -> jedis.setrange("s", -1, "x")).hasMessage("ERR offset is out of range");
  }

  @Test
  void incrbyfloat_addsDecimalsAsRedisPrintsThem() {
    jedis.set("f", "10.50");
    assertThat(jedis.incrByFloat("f", 0.1)).isEqualTo(10.6);
    assertThat(jedis.get("f")).isEqualTo("10.6");
    assertThat(jedis.incrByFloat("f", -5)).isEqualTo(5.6);
    jedis.set("e", "5.0e3");
    assertThat(call("INCRBYFLOAT", "e", "2.0e2"))
        .isEqualTo("5200".getBytes(StandardCharsets.UTF_8));
    assertThat(call("INCRBYFLOAT", "new", "3")).isEqualTo("3".getBytes(StandardCharsets.UTF_8));
    jedis.set("word", "abc");
    assertThatThrownBy(() -> jedis.incrByFloat("word", 1))
        .hasMessage("ERR value is not a valid float");
    assertThatThrownBy(() -> call("INCRBYFLOAT", "f", "x"))
        .hasMessage("ERR value is not a valid float");
  }

  @Test
  void renameCopy_moveAndDuplicateValues() {
    jedis.set("a", "1");
    assertThat(jedis.rename("a", "b")).isEqualTo("OK");
    assertThat(jedis.exists("a")).isFalse();
    assertThat(jedis.get("b")).isEqualTo("1");
    assertThatThrownBy(() -> jedis.rename("a", "c")).hasMessage("ERR no such key");
    jedis.set("c", "3");
    assertThat(jedis.renamenx("b", "c")).isZero();
    assertThat(jedis.renamenx("b", "d")).isEqualTo(1);
    assertThat(jedis.get("d")).isEqualTo("1");
    assertThat(jedis.copy("d", "c", false)).isFalse();
    assertThat(jedis.copy("d", "c", true)).isTrue();
    assertThat(jedis.get("c")).isEqualTo("1");
    assertThat(jedis.copy("d", "e", false)).isTrue();
    assertThat(jedis.get("d")).isEqualTo("1");
    assertThat(jedis.copy("missing", "f", false)).isFalse();
    assertThatThrownBy(() -> jedis.copy("d", "d", true))
        .hasMessage("ERR source and destination objects are the same");
  }

  @Test
  void timeRandomkeyReset_answerAsRedis() {
    List<String> time = jedis.time();
    assertThat(Long.parseLong(time.get(0)))
        .isCloseTo(System.currentTimeMillis() / 1000, within(600L));
    assertThat(Long.parseLong(time.get(1))).isBetween(0L, 999_999L);
    assertThat(jedis.randomKey()).isNull();
    Set<String> keys = new HashSet<>();
    for (int i = 0; i < 50; i++) {
      jedis.set("rk" + i, "v");
      keys.add("rk" + i);
    }
    for (int i = 0; i < 20; i++) {
      assertThat(jedis.randomKey()).isIn(keys);
    }
    jedis.clientSetname("named");
    assertThat(text("MULTI")).isEqualTo("OK");
    assertThat(text("RESET")).isEqualTo("RESET");
    assertThat(jedis.clientGetname()).isNull();
    assertThatThrownBy(() -> call("EXEC")).hasMessage("ERR EXEC without MULTI");
  }
}
