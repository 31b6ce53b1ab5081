package io.kv4j.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Limits;
import io.kv4j.Snapshot;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreConfig;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The checks {@link AbstractStore} and {@link AbstractSnapshot} do once for every engine around
 * conditional writes, snapshots, multi-get and backup, shown on the memory engine and on a small
 * file-backed store.
 */
class CapabilitiesTest {
  @TempDir Path tmp;

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static Store memory() {
    return Stores.open(StoreConfig.builder("memory").build());
  }

  @Test
  void conditionalWrites_compareByContent() {
    try (Store s = memory()) {
      assertThat(s.putIfAbsent(b("k"), b("1"))).isTrue();
      assertThat(s.putIfAbsent(b("k"), b("2"))).isFalse();
      assertThat(s.get(b("k"))).isEqualTo(b("1"));
      assertThat(s.replace(b("k"), b("2"), b("3"))).isFalse();
      assertThat(s.replace(b("k"), b("1"), b("3"))).isTrue(); // a fresh array with equal content
      assertThat(s.get(b("k"))).isEqualTo(b("3"));
      assertThat(s.replace(b("absent"), b("3"), b("4"))).isFalse();
      assertThat(s.contains(b("absent"))).isFalse();
      assertThat(s.delete(b("k"), b("1"))).isFalse();
      assertThat(s.delete(b("k"), b("3"))).isTrue();
      assertThat(s.get(b("k"))).isNull();
      assertThat(s.putIfAbsent(b("e"), new byte[0])).isTrue();
      assertThat(s.replace(b("e"), new byte[0], b("x"))).isTrue();
    }
  }

  @Test
  void writeIf_appliesAllOrNothing() {
    try (Store s = memory()) {
      s.put(b("a"), b("1"));
      WriteBatch ok =
          new WriteBatch()
              .expect(b("a"), b("1"))
              .expectAbsent(b("b"))
              .put(b("a"), b("2"))
              .put(b("b"), b("x"));
      assertThat(s.writeIf(ok)).isTrue();
      assertThat(s.get(b("a"))).isEqualTo(b("2"));
      assertThat(s.get(b("b"))).isEqualTo(b("x"));
      // The same batch again: a no longer holds 1 and b is present; nothing changes.
      WriteBatch stale = new WriteBatch().expect(b("a"), b("1")).put(b("c"), b("y"));
      assertThat(s.writeIf(stale)).isFalse();
      assertThat(s.get(b("c"))).isNull();
      // An empty value is a value, not absence.
      s.put(b("e"), new byte[0]);
      assertThat(s.writeIf(new WriteBatch().expectAbsent(b("e")).put(b("c"), b("y")))).isFalse();
      assertThat(s.writeIf(new WriteBatch().expect(b("e"), new byte[0]))).isTrue();
      // Conditions see the store before the batch, not the batch's own writes.
      WriteBatch own = new WriteBatch().put(b("n"), b("1")).expect(b("n"), b("1"));
      assertThat(s.writeIf(own)).isFalse();
      assertThat(s.get(b("n"))).isNull();
      // No conditions: a plain write.
      assertThat(s.writeIf(new WriteBatch().put(b("p"), b("1")))).isTrue();
      assertThat(s.get(b("p"))).isEqualTo(b("1"));
    }
  }

  @Test
  void writeIf_keyspaceConditions() {
    try (Store s = memory()) {
      Store users = s.keyspace("users");
      users.put(b("u"), b("1"));
      s.put(b("u"), b("other"));
      WriteBatch b =
          new WriteBatch()
              .expect("users", b("u"), b("1"))
              .expectAbsent("never", b("u"))
              .put("users", b("u"), b("2"));
      assertThat(s.writeIf(b)).isTrue();
      assertThat(users.get(b("u"))).isEqualTo(b("2"));
      // An unnamed condition on a handle means the handle's keyspace.
      assertThat(users.writeIf(new WriteBatch().expect(b("u"), b("other")))).isFalse();
      assertThat(users.writeIf(new WriteBatch().expect(b("u"), b("2")).delete(b("u")))).isTrue();
      assertThat(users.get(b("u"))).isNull();
      assertThat(s.get(b("u"))).isEqualTo(b("other"));
      assertThat(s.keyspaces()).doesNotContain("never");
    }
  }

  @Test
  void writeIf_isRefusedWhereItCouldBeIgnored() {
    Path home = tmp.resolve("store");
    Store s = memory();
    try (FileStore f = new FileStore(home, Set.of(Feature.ATOMIC_BATCH))) {
      WriteBatch conditional = new WriteBatch().expectAbsent(b("k")).put(b("k"), b("v"));
      assertThatThrownBy(() -> s.write(conditional))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("1 conditions")
          .hasMessageContaining("writeIf");
      assertThat(s.get(b("k"))).isNull();
      assertThatThrownBy(() -> f.writeIf(conditional))
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("CONDITIONAL_BATCH")
          .hasMessageContaining("file");
      assertThatThrownBy(() -> s.writeIf(new WriteBatch().expect(new byte[70_000], b("v"))))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("key");
      // A condition no key can satisfy (longer than the value limit) answers false.
      s.put(b("k"), b("v"));
      byte[] huge = new byte[(256 << 20) + 1];
      assertThat(s.writeIf(new WriteBatch().expect(b("k"), huge).delete(b("k")))).isFalse();
      assertThat(s.get(b("k"))).isEqualTo(b("v"));
      s.close();
      assertThatThrownBy(() -> s.writeIf(new WriteBatch().expectAbsent(b("k"))))
          .isInstanceOf(StoreClosedException.class);
    } finally {
      s.close();
    }
  }

  @Test
  void conditionalWrites_validateLikePut() {
    Store s = memory();
    try {
      assertThatThrownBy(() -> s.putIfAbsent(new byte[0], b("v")))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("key is empty");
      assertThatThrownBy(() -> s.replace(b("k"), null, b("v")))
          .isInstanceOf(NullPointerException.class)
          .hasMessageContaining("expected");
      assertThatThrownBy(() -> s.delete(b("k"), (byte[]) null))
          .isInstanceOf(NullPointerException.class);
      assertThatThrownBy(() -> s.putIfAbsent(b("k"), null))
          .isInstanceOf(NullPointerException.class);
    } finally {
      s.close();
    }
    assertThatThrownBy(() -> s.putIfAbsent(b("k"), b("v")))
        .isInstanceOf(StoreClosedException.class);
  }

  @Test
  void snapshot_seesThePointItWasTakenAt() {
    try (Store s = memory()) {
      s.put(b("a"), b("1"));
      s.put(b("b"), b("1"));
      try (Snapshot snap = s.snapshot()) {
        s.write(new WriteBatch().put(b("a"), b("2")).put(b("b"), b("2")).put(b("c"), b("2")));
        s.delete(b("a"));
        assertThat(snap.get(b("a"))).isEqualTo(b("1"));
        assertThat(snap.getAll(List.of(b("b"), b("c"), b("a"))))
            .containsExactly(b("1"), null, b("1"));
        List<String> keys = new ArrayList<>();
        snap.forEach(KeyRange.all().reverse(), e -> keys.add(new String(e.key())));
        assertThat(keys).containsExactly("b", "a");
        assertThat(s.get(b("a"))).isNull();
        assertThat(s.get(b("c"))).isEqualTo(b("2"));
      }
    }
  }

  @Test
  void snapshotClose_closesItsCursorsAndIsCounted() {
    try (Store s = memory()) {
      s.put(b("a"), b("1"));
      Snapshot snap = s.snapshot();
      assertThat(s.stats().figures()).containsEntry(AbstractStore.OPEN_SNAPSHOTS, 1);
      Cursor c = snap.scan(KeyRange.all());
      assertThat(s.stats().figures()).containsEntry(AbstractStore.OPEN_CURSORS, 1);
      snap.close();
      snap.close(); // idempotent
      assertThat(s.stats().figures())
          .containsEntry(AbstractStore.OPEN_SNAPSHOTS, 0)
          .containsEntry(AbstractStore.OPEN_CURSORS, 0);
      assertThatThrownBy(c::hasNext)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("snapshot is closed");
      assertThatThrownBy(() -> snap.get(b("a")))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("snapshot is closed");
    }
  }

  @Test
  void storeClose_closesOpenSnapshots() {
    Store s = memory();
    s.put(b("a"), b("1"));
    Snapshot snap = s.snapshot();
    Cursor c = snap.scan(KeyRange.all());
    s.close();
    assertThatThrownBy(c::hasNext)
        .isInstanceOf(StoreClosedException.class)
        .hasMessageContaining("store is closed");
    assertThatThrownBy(() -> snap.get(b("a")))
        .isInstanceOf(StoreClosedException.class)
        .hasMessageContaining("snapshot's store is closed");
    assertThatThrownBy(s::snapshot).isInstanceOf(StoreClosedException.class);
  }

  @Test
  void getAll_returnsValuesInOrderWithNulls() {
    try (Store s = memory()) {
      s.put(b("a"), b("1"));
      assertThat(s.getAll(List.of(b("a"), b("x"), b("a")))).containsExactly(b("1"), null, b("1"));
      assertThat(s.getAll(List.of())).isEmpty();
      assertThatThrownBy(() -> s.getAll(Arrays.asList(b("a"), null)))
          .isInstanceOf(NullPointerException.class);
      assertThatThrownBy(() -> s.getAll(List.of(new byte[0])))
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Test
  void missingFeatures_areRefusedNamingTheFeature() {
    try (Store s = new FileStore(tmp.resolve("store"), Set.of())) {
      assertThatThrownBy(() -> s.putIfAbsent(b("k"), b("v")))
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("CONDITIONAL_WRITE");
      assertThatThrownBy(s::snapshot)
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("SNAPSHOT_READ");
      assertThatThrownBy(() -> s.backup(tmp.resolve("copy")))
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("BACKUP");
    }
  }

  @Test
  void backup_appearsWholeUnderTheTarget() throws IOException {
    Path home = tmp.resolve("store");
    try (FileStore s = new FileStore(home, Set.of(Feature.BACKUP))) {
      s.put(b("k"), b("v"));
      Path target = tmp.resolve("backups/one");
      s.backup(target);
      assertThat(Files.readString(target.resolve("data"))).isEqualTo("k=v");
      // An empty directory is a valid target too.
      Path empty = Files.createDirectories(tmp.resolve("empty"));
      s.backup(empty);
      assertThat(empty.resolve("data")).exists();
      assertThat(leftovers(tmp.resolve("backups"))).containsExactly("one");
    }
  }

  @Test
  void backup_refusesTargetsThatHoldData() throws IOException {
    Path home = tmp.resolve("store");
    try (FileStore s = new FileStore(home, Set.of(Feature.BACKUP))) {
      Path full = Files.createDirectories(tmp.resolve("full"));
      Files.writeString(full.resolve("precious"), "x");
      assertThatThrownBy(() -> s.backup(full))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("not an empty directory");
      assertThat(Files.readString(full.resolve("precious"))).isEqualTo("x");
      assertThatThrownBy(() -> s.backup(home))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("own location");
      assertThatThrownBy(() -> s.backup(home.resolve("inside")))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("own location");
    }
  }

  @Test
  void backup_thatFailsLeavesNothing() throws IOException {
    Path home = tmp.resolve("store");
    try (FileStore s = new FileStore(home, Set.of(Feature.BACKUP))) {
      s.failBackup = true;
      Path target = tmp.resolve("backups/one");
      assertThatThrownBy(() -> s.backup(target))
          .isInstanceOf(StoreIOException.class)
          .hasMessageContaining("backup to " + target)
          .hasMessageContaining("disk full");
      assertThat(target).doesNotExist();
      assertThat(leftovers(tmp.resolve("backups"))).isEmpty();
    }
  }

  @Test
  void backup_removesTheCopyOfAKilledBackupButNotOfALiveOne() throws Exception {
    Path home = tmp.resolve("store");
    Path backups = Files.createDirectories(tmp.resolve("backups"));
    Process finished = new ProcessBuilder("true").start();
    finished.waitFor();
    Path abandoned =
        Files.createDirectories(backups.resolve(".one.partial-" + finished.pid() + "-ab"));
    Files.writeString(abandoned.resolve("data"), "half");
    Process live = new ProcessBuilder("sleep", "60").start();
    try (FileStore s = new FileStore(home, Set.of(Feature.BACKUP))) {
      Path running = Files.createDirectories(backups.resolve(".one.partial-" + live.pid() + "-cd"));
      Path foreign = Files.createDirectories(backups.resolve(".one.partial-notapid"));
      s.put(b("k"), b("v"));
      s.backup(backups.resolve("one"));
      assertThat(abandoned).as("the copy of a process that is gone").doesNotExist();
      assertThat(running).as("the copy of a live process").exists();
      assertThat(foreign).as("a name this code did not make").exists();
      assertThat(Files.readString(backups.resolve("one/data"))).isEqualTo("k=v");
    } finally {
      live.destroyForcibly().waitFor();
    }
  }

  private static List<String> leftovers(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  /** A one-file store: enough to exercise the backup shell. */
  private static final class FileStore extends AbstractStore {
    private final Path home;
    private final Map<String, String> data = new java.util.TreeMap<>();
    boolean failBackup;

    FileStore(Path home, Set<Feature> features) {
      super(
          new StoreInfo(
              "file", features, new Limits(511, 1 << 24), Durability.SYNC, home.toString(), false));
      this.home = home;
    }

    @Override
    protected byte[] doGet(byte[] key) {
      String v = data.get(new String(key, StandardCharsets.UTF_8));
      return v == null ? null : b(v);
    }

    @Override
    protected void doPut(byte[] key, byte[] value) {
      data.put(new String(key, StandardCharsets.UTF_8), new String(value, StandardCharsets.UTF_8));
    }

    @Override
    protected void doDelete(byte[] key) {
      data.remove(new String(key, StandardCharsets.UTF_8));
    }

    @Override
    protected AbstractCursor doScan(KeyRange range) {
      throw new UnsupportedOperationException("no scans");
    }

    @Override
    protected void doWrite(WriteBatch batch) {
      throw new UnsupportedOperationException("no batches");
    }

    @Override
    protected void doSync() {}

    @Override
    protected void doBackup(Path target) throws IOException {
      StringBuilder sb = new StringBuilder();
      data.forEach((k, v) -> sb.append(k).append('=').append(v));
      Files.writeString(target.resolve("data"), sb);
      if (failBackup) {
        throw new IOException("disk full");
      }
    }

    @Override
    protected StoreStats doStats() {
      return new StoreStats(data.size(), true, 0, Map.of());
    }

    @Override
    protected void doClose() {
      assertThat(home).isNotNull();
    }
  }
}
