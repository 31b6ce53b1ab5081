package io.kv4j.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Isolated;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.util.JedisClusterCRC16;

/**
 * Keyspaces on Redis beyond the TCK: the Redis keys they live under (one hash slot with the
 * store's), generations that keep a stale handle's writes out of a keyspace created again, a drop
 * by another client, a store made before keyspaces, and a drop that frees memory in the server's
 * background thread; in both modes. Isolated: that last check reads a server-wide counter, which
 * the drops of test classes running beside it (see junit-platform.properties) would also raise.
 */
@Isolated
class RedisKeyspaceTest {
  @TempDir Path dir;
  private final List<Runnable> cleanup = new ArrayList<>();

  @AfterEach
  void clean() {
    cleanup.forEach(Runnable::run);
  }

  private StoreConfig.Builder config(boolean cluster, Path path) {
    return TestRedis.config(cluster, path, cleanup);
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String s(byte[] b) {
    return b == null ? null : new String(b, StandardCharsets.UTF_8);
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void keyspaceKeys_shareTheStoresHashSlot(boolean cluster) {
    StoreConfig c = config(cluster, dir.resolve("slot")).build();
    String tag = "{" + RedisSettings.namespaceFor(c.path()) + "}";
    try (Store store = Stores.open(c);
        UnifiedJedis raw = TestRedis.client(cluster)) {
      store.put(b("k"), b("own"));
      store.keyspace("users").put(b("k"), b("user"));
      store.write(
          new WriteBatch().put("Orders-2", b("k"), b("order")).put("users", b("j"), b("x")));
      assertThat(raw.hget(tag + ":spaces", "users")).as("the keyspace list").isNotNull();
      String gen = raw.hget(tag + ":spaces", "users");
      assertThat(raw.hget(tag + ":k:users:" + gen + ":v", "k")).isEqualTo("user");
      assertThat(raw.zrange(tag + ":k:users:" + gen + ":i", 0, -1)).containsExactly("j", "k");
      assertThat(raw.hget(tag + ":v", "k")).isEqualTo("own");
      assertThat(JedisClusterCRC16.getSlot(tag + ":k:users:" + gen + ":v"))
          .as("a keyspace's keys are in the store's slot, so one script spans them")
          .isEqualTo(JedisClusterCRC16.getSlot(tag + ":v"))
          .isEqualTo(JedisClusterCRC16.getSlot(tag + ":spaces"));
    }
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void staleHandle_afterDropAndCreateByAnotherClient_writesNothing(boolean cluster) {
    StoreConfig c = config(cluster, dir.resolve("stale")).option("lock", "shared").build();
    try (Store first = Stores.open(c);
        Store second = Stores.open(c)) {
      Store stale = first.keyspace("jobs");
      stale.put(b("a"), b("1"));
      assertThat(second.dropKeyspace("jobs")).isTrue();
      assertThat(catchThrowable(() -> stale.put(b("b"), b("2"))))
          .as("a write through a handle of a keyspace another client dropped")
          .isInstanceOf(StoreClosedException.class)
          .hasMessageContaining("dropped");
      Store fresh = second.keyspace("jobs");
      for (Runnable write :
          List.<Runnable>of(
              () -> stale.put(b("c"), b("3")),
              () -> stale.delete(b("a")),
              () -> stale.putIfAbsent(b("d"), b("4")),
              () -> stale.write(new WriteBatch().put(b("e"), b("5"))),
              () -> first.write(new WriteBatch().put("x", b("f"), b("6")).put(b("g"), b("7"))))) {
        Throwable t = catchThrowable(write::run);
        if (t != null) {
          assertThat(t).isInstanceOf(StoreClosedException.class);
        }
      }
      assertThat(fresh.stream(KeyRange.all()).map(e -> s(e.key())))
          .as("the keyspace created again holds none of the stale handle's writes")
          .isEmpty();
      assertThat(fresh.stats().keyCount()).isZero();
      assertThat(s(first.keyspace("x").get(b("f"))))
          .as("a batch through the store naming another keyspace still applies")
          .isEqualTo("6");
      assertThat(first.keyspaces()).containsExactly("jobs", "x");
    }
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void batchNamingAKeyspace_droppedByAnotherClient_createsItAgain(boolean cluster) {
    StoreConfig c = config(cluster, dir.resolve("again")).option("lock", "shared").build();
    try (Store first = Stores.open(c);
        Store second = Stores.open(c)) {
      first.write(new WriteBatch().put("q", b("a"), b("1")));
      second.dropKeyspace("q");
      first.write(new WriteBatch().put("q", b("b"), b("2")).put(b("own"), b("3")));
      Store q = second.keyspace("q");
      assertThat(q.stream(KeyRange.all()).map(e -> s(e.key()))).containsExactly("b");
      assertThat(s(second.get(b("own")))).isEqualTo("3");
    }
  }

  /**
   * A conditional batch creates the keyspaces its operations name only when it applies, never those
   * only its conditions name; its conditions read a keyspace another client created since; through
   * a handle whose keyspace another client dropped it is refused and writes nothing.
   */
  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void writeIf_keyspaces_createdOnlyWhenApplied(boolean cluster) {
    StoreConfig c = config(cluster, dir.resolve("cond")).option("lock", "shared").build();
    try (Store s = Stores.open(c);
        Store other = Stores.open(c)) {
      s.put(b("k"), b("v"));
      assertThat(s.writeIf(new WriteBatch().expectAbsent("ghost", b("k")).put(b("x"), b("1"))))
          .as("a key of an absent keyspace is absent")
          .isTrue();
      assertThat(s(s.get(b("x")))).isEqualTo("1");
      assertThat(s.writeIf(new WriteBatch().expect(b("k"), b("no")).put("fresh", b("k"), b("1"))))
          .isFalse();
      assertThat(s.keyspaces())
          .as("neither a condition's keyspace nor a refused batch's is created")
          .doesNotContain("ghost", "fresh");
      assertThat(s.writeIf(new WriteBatch().expect(b("k"), b("v")).put("fresh", b("k"), b("1"))))
          .isTrue();
      assertThat(s.keyspaces()).contains("fresh").doesNotContain("ghost");
      assertThat(s(s.keyspace("fresh").get(b("k")))).isEqualTo("1");

      other.keyspace("ghost").put(b("k"), b("boo"));
      assertThat(s.writeIf(new WriteBatch().expectAbsent("ghost", b("k")).put(b("y"), b("1"))))
          .as("the condition reads the keyspace another client created")
          .isFalse();
      assertThat(s.writeIf(new WriteBatch().expect("ghost", b("k"), b("boo")).put(b("y"), b("2"))))
          .isTrue();
      assertThat(s(s.get(b("y")))).isEqualTo("2");

      Store fresh = s.keyspace("fresh");
      assertThat(other.dropKeyspace("fresh")).isTrue();
      WriteBatch late = new WriteBatch().expect(b("k"), b("1")).put(b("k"), b("2"));
      late.put(Store.DEFAULT_KEYSPACE, b("z"), b("1"));
      assertThat(catchThrowable(() -> fresh.writeIf(late)))
          .isInstanceOf(StoreClosedException.class)
          .hasMessageContaining("was dropped");
      assertThat(s.get(b("z"))).as("the refused batch wrote nothing").isNull();
      assertThat(s.keyspaces()).doesNotContain("fresh");
    }
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void storeMadeBeforeKeyspaces_opensAndGainsKeyspaces(boolean cluster) {
    StoreConfig c = config(cluster, dir.resolve("old")).build();
    String tag = "{" + RedisSettings.namespaceFor(c.path()) + "}";
    try (UnifiedJedis raw = TestRedis.client(cluster)) {
      // What kv4j-redis wrote before keyspaces: the marker, the hash and the index only.
      raw.hset(tag + ":meta", "engine", "kv4j-redis 1");
      raw.hset(tag + ":v", "k", "old");
      raw.zadd(tag + ":i", 0, "k");
    }
    try (Store store = Stores.open(c)) {
      assertThat(store.keyspaces()).isEmpty();
      assertThat(s(store.get(b("k")))).isEqualTo("old");
      store.keyspace("fresh").put(b("k"), b("new"));
      assertThat(s(store.get(b("k")))).isEqualTo("old");
    }
    try (Store store = Stores.open(c)) {
      assertThat(store.keyspaces()).containsExactly("fresh");
      assertThat(s(store.keyspace("fresh").get(b("k")))).isEqualTo("new");
    }
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void drop_ofALargeKeyspace_unlinksItsKeysForBackgroundFreeing(boolean cluster) {
    StoreConfig c = config(cluster, dir.resolve("large")).build();
    String tag = "{" + RedisSettings.namespaceFor(c.path()) + "}";
    try (Store store = Stores.open(c);
        UnifiedJedis raw = TestRedis.client(cluster)) {
      Store big = store.keyspace("big");
      for (int chunk = 0; chunk < 20; chunk++) {
        WriteBatch batch = new WriteBatch();
        for (int i = 0; i < 1000; i++) {
          batch.put(b(String.format("key%06d", chunk * 1000 + i)), b("v"));
        }
        big.write(batch);
      }
      String gen = raw.hget(tag + ":spaces", "big");
      assertThat(raw.hlen(tag + ":k:big:" + gen + ":v")).isEqualTo(20_000);
      long before = lazyfreed(raw, tag);
      assertThat(store.dropKeyspace("big")).isTrue();
      assertThat(raw.exists(tag + ":k:big:" + gen + ":v", tag + ":k:big:" + gen + ":i"))
          .as("the keyspace's keys are gone at once")
          .isZero();
      // The lazy-free thread counts an object once it has freed it: wait for that, with a deadline.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      long freed = lazyfreed(raw, tag) - before;
      while (freed < 2 && System.nanoTime() - deadline < 0) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        freed = lazyfreed(raw, tag) - before;
      }
      assertThat(freed)
          .as("both keys (over 64 elements each) went to the server's lazy-free thread")
          .isGreaterThanOrEqualTo(2);
      assertThat(store.keyspaces()).isEmpty();
    }
  }

  /** {@code lazyfreed_objects} of INFO memory, on the node serving the store's slot. */
  private static long lazyfreed(UnifiedJedis raw, String tag) {
    Object info = raw.sendCommand(b(tag + ":v"), () -> b("INFO"), b("memory"));
    Map<String, String> fields = new HashMap<>();
    for (String line : s((byte[]) info).split("\r\n")) {
      int colon = line.indexOf(':');
      if (colon > 0) {
        fields.put(line.substring(0, colon), line.substring(colon + 1));
      }
    }
    assertThat(fields).containsKey("lazyfreed_objects");
    return Long.parseLong(fields.get("lazyfreed_objects"));
  }
}
