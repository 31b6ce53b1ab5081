package io.kv4j.micrometer;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Cursor;
import io.kv4j.DamagedRegion;
import io.kv4j.KeyRange;
import io.kv4j.Snapshot;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreLockedException;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class MeteredStoreTest {
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final Store store = MeteredStore.wrap(Stores.open("memory:"), registry, "orders");

  @AfterEach
  void close() {
    store.close();
  }

  private static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }

  private long calls(String operation) {
    return calls(operation, "success");
  }

  private long calls(String operation, String result) {
    return registry
        .find(Meters.OPERATIONS)
        .tags("operation", operation, "result", result)
        .timers()
        .stream()
        .mapToLong(Timer::count)
        .sum();
  }

  private double errors(String operation, String kind) {
    Counter c = registry.find(Meters.ERRORS).tags("operation", operation, "kind", kind).counter();
    return c == null ? 0 : c.count();
  }

  private double counter(String name, String... tags) {
    Counter c = registry.find(name).tags(tags).counter();
    return c == null ? 0 : c.count();
  }

  @Test
  void operations_eachTimedUnderItsNameAndAnsweredAsTheStoreAnswers() {
    store.put(b("a"), b("1"));
    store.put(b("b"), b("2"));
    assertThat(store.get(b("a"))).isEqualTo(b("1"));
    assertThat(store.get(b("zz"))).isNull();
    assertThat(store.contains(b("b"))).isTrue();
    assertThat(store.getAll(List.of(b("a"), b("b")))).containsExactly(b("1"), b("2"));
    store.delete(b("b"));
    store.write(new WriteBatch().put(b("c"), b("3")).delete(b("a")));
    try (Cursor c = store.scan(KeyRange.all())) {
      assertThat(c.next().key()).isEqualTo(b("c"));
    }
    store.sync();
    store.verify();

    assertThat(calls("put")).isEqualTo(2);
    assertThat(calls("get")).isEqualTo(2);
    assertThat(calls("contains")).isEqualTo(1);
    assertThat(calls("get-all")).isEqualTo(1);
    assertThat(calls("delete")).isEqualTo(1);
    assertThat(calls("batch")).isEqualTo(1);
    assertThat(calls("scan")).isEqualTo(1);
    assertThat(calls("sync")).isEqualTo(1);
    assertThat(calls("verify")).isEqualTo(1);
    assertThat(calls("put-if-absent")).isZero();
    Timer put = registry.get(Meters.OPERATIONS).tags("operation", "put", "store", "orders").timer();
    assertThat(put.getId().getTag("engine")).isEqualTo("memory");
    assertThat(put.getId().getTag("exception")).isEqualTo("none");
    assertThat(put.totalTime(java.util.concurrent.TimeUnit.NANOSECONDS)).isPositive();
  }

  @Test
  void conditionalWrites_countedAppliedOrRejected() {
    assertThat(store.putIfAbsent(b("k"), b("1"))).isTrue();
    assertThat(store.putIfAbsent(b("k"), b("2"))).isFalse();
    assertThat(store.replace(b("k"), b("1"), b("3"))).isTrue();
    assertThat(store.replace(b("k"), b("1"), b("4"))).isFalse();
    assertThat(store.delete(b("k"), b("9"))).isFalse();
    assertThat(store.delete(b("k"), b("3"))).isTrue();
    assertThat(store.writeIf(new WriteBatch().expectAbsent(b("k")).put(b("k"), b("5")))).isTrue();
    assertThat(store.writeIf(new WriteBatch().expectAbsent(b("k")).put(b("k"), b("6")))).isFalse();
    // one more rejection each, so that applied and rejected differ
    assertThat(store.putIfAbsent(b("k"), b("7"))).isFalse();
    assertThat(store.replace(b("k"), b("1"), b("7"))).isFalse();
    assertThat(store.delete(b("k"), b("1"))).isFalse();
    assertThat(store.writeIf(new WriteBatch().expectAbsent(b("k")))).isFalse();

    for (String op : List.of("put-if-absent", "replace", "delete-if", "batch-if")) {
      assertThat(calls(op)).as(op).isEqualTo(3);
      assertThat(counter(Meters.CONDITIONAL, "operation", op, "outcome", "applied"))
          .as(op)
          .isEqualTo(1);
      assertThat(counter(Meters.CONDITIONAL, "operation", op, "outcome", "rejected"))
          .as(op)
          .isEqualTo(2);
    }
  }

  @Test
  void closedStore_callCountedAsClosedError() {
    store.put(b("a"), b("1"));
    store.close();

    assertThatThrownBy(() -> store.get(b("a"))).isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(() -> store.put(b("a"), b("2"))).isInstanceOf(StoreClosedException.class);

    assertThat(errors("get", "closed")).isEqualTo(1);
    assertThat(errors("put", "closed")).isEqualTo(1);
    assertThat(calls("get", "error")).isEqualTo(1);
    assertThat(calls("put")).isEqualTo(1);
    assertThat(
            registry
                .get(Meters.OPERATIONS)
                .tags("operation", "get", "result", "error")
                .timer()
                .getId()
                .getTag("exception"))
        .isEqualTo("StoreClosedException");
  }

  static Stream<Arguments> failures() {
    Path file = Path.of("data.log");
    return Stream.of(
        Arguments.of(
            new StoreCorruptedException(
                "two regions",
                List.of(DamagedRegion.at(file, 10, "crc"), DamagedRegion.at(file, 90, "crc"))),
            "corrupted"),
        Arguments.of(new StoreIOException("disk full", new IOException("ENOSPC")), "io"),
        Arguments.of(new StoreLockedException("held by pid 7", Path.of("/d")), "locked"),
        Arguments.of(new StoreClosedException("closed"), "closed"),
        Arguments.of(new IllegalArgumentException("key too long"), "other"));
  }

  @ParameterizedTest
  @MethodSource("failures")
  void failingVerify_countedByKind(RuntimeException failure, String kind) {
    FakeStore fake = new FakeStore();
    Store metered = MeteredStore.wrap(fake, registry, "fake");
    fake.failure = failure;

    assertThatThrownBy(metered::verify).isSameAs(failure);

    assertThat(errors("verify", kind)).isEqualTo(1);
    for (String other : List.of("closed", "corrupted", "io", "locked", "other")) {
      if (!other.equals(kind)) {
        assertThat(errors("verify", other)).as(other).isZero();
      }
    }
    assertThat(calls("verify", "error")).isEqualTo(1);
  }

  @Test
  void cursors_countedOpenedAndClosedOnceEach() {
    for (int i = 0; i < 3; i++) {
      store.put(b("k" + i), b("v"));
    }
    Cursor closed = store.scan(KeyRange.all());
    closed.close();
    closed.close();
    Cursor exhausted = store.scan(KeyRange.all()); // read to the end, never closed
    int read = 0;
    while (exhausted.hasNext()) {
      exhausted.next();
      read++;
    }
    assertThat(read).isEqualTo(3);
    Cursor leftOpen = store.scan(KeyRange.all());
    assertThat(leftOpen.hasNext()).isTrue();

    assertThat(counter(Meters.CURSORS_OPENED)).isEqualTo(3);
    assertThat(counter(Meters.CURSORS_CLOSED)).isEqualTo(2);

    store.close(); // closes the cursor left open
    assertThat(counter(Meters.CURSORS_CLOSED)).isEqualTo(3);
  }

  @Test
  void cursorOfStoreClosedUnderneath_errorCountedUnderScan() {
    store.put(b("a"), b("1"));
    Cursor c = store.scan(KeyRange.all());
    ((MeteredStore) store).delegate().close();

    assertThatThrownBy(c::hasNext).isInstanceOf(StoreClosedException.class);
    assertThat(errors("scan", "closed")).isEqualTo(1);
  }

  @Test
  void snapshot_readsTimedAndClosesCounted() {
    store.put(b("a"), b("1"));
    Snapshot s = store.snapshot();
    store.put(b("a"), b("2"));
    assertThat(s.get(b("a"))).isEqualTo(b("1"));
    assertThat(s.getAll(List.of(b("a")))).containsExactly(b("1"));
    Cursor c = s.scan(KeyRange.all());
    assertThat(c.next().value()).isEqualTo(b("1"));

    assertThat(calls("snapshot")).isEqualTo(1);
    assertThat(calls("snapshot-get")).isEqualTo(1);
    assertThat(calls("snapshot-get-all")).isEqualTo(1);
    assertThat(calls("snapshot-scan")).isEqualTo(1);
    assertThat(counter(Meters.SNAPSHOTS_OPENED)).isEqualTo(1);
    assertThat(counter(Meters.SNAPSHOTS_CLOSED)).isZero();

    s.close();
    assertThat(counter(Meters.SNAPSHOTS_CLOSED)).isEqualTo(1);
    assertThat(counter(Meters.CURSORS_CLOSED)).isEqualTo(1);
  }

  @Test
  void keyspaceHandle_meteredUnderTheStoresMeters() {
    Store ks = store.keyspace("users");
    ks.put(b("a"), b("1"));
    assertThat(ks.get(b("a"))).isEqualTo(b("1"));
    assertThat(store.get(b("a"))).isNull();
    assertThat(store.keyspaces()).containsExactly("users");

    assertThat(calls("keyspace")).isEqualTo(1);
    assertThat(calls("put")).isEqualTo(1);
    assertThat(calls("get")).isEqualTo(2);
    assertThat(registry.find(Meters.OPERATIONS).tagKeys("keyspace").timers()).isEmpty();

    Cursor c = ks.scan(KeyRange.all());
    store.close(); // closes the keyspace handle and its cursor
    assertThat(counter(Meters.CURSORS_CLOSED)).isEqualTo(1);
    assertThatThrownBy(() -> ks.get(b("a"))).isInstanceOf(StoreClosedException.class);
    assertThat(c).isNotNull();
  }

  @Test
  void wrap_blankName_refused() {
    FakeStore fake = new FakeStore();
    assertThatThrownBy(() -> MeteredStore.wrap(fake, registry, " "))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("name");
  }
}
