package io.kv4j.lmdb;

import static io.kv4j.lmdb.Lmdb.b;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreLockedException;
import io.kv4j.Stores;
import io.kv4j.tck.ChildProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LmdbReadOnlyTest {
  @TempDir Path dir;

  private Store readOnly() {
    return Stores.open(Lmdb.config(dir).readOnly(true).build());
  }

  @Test
  void readOnly_withoutLockFiles_readsWithoutCreatingOrChangingAnyFile() throws Exception {
    try (Store s = Lmdb.open(dir)) {
      s.put(b("k"), b("v"));
    }
    Files.delete(dir.resolve("lock.mdb"));
    Files.deleteIfExists(dir.resolve("kv4j.lock"));
    backdate();
    Map<String, FileState> before = files();
    try (Store s = readOnly()) {
      assertThat(s.get(b("k"))).isEqualTo(b("v"));
      s.verify();
      assertThat(files()).isEqualTo(before);
    }
    assertThat(files()).isEqualTo(before).doesNotContainKeys("lock.mdb", "kv4j.lock");
  }

  /** What a listing compares of each file. */
  record FileState(long size, FileTime modified, String sha256) {}

  /**
   * Each file of the directory by name. Run {@link #backdate()} first, so that a write by the open
   * under test cannot hide in the granularity of the file system's clock.
   */
  private Map<String, FileState> files() throws Exception {
    Map<String, FileState> out = new TreeMap<>();
    try (Stream<Path> l = Files.list(dir)) {
      for (Path p : l.toList()) {
        byte[] digest = MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(p));
        out.put(
            p.getFileName().toString(),
            new FileState(
                Files.size(p), Files.getLastModifiedTime(p), HexFormat.of().formatHex(digest)));
      }
    }
    return out;
  }

  /** Sets every file's modification time a day back. */
  private void backdate() throws Exception {
    FileTime dayAgo = FileTime.from(Instant.now().minus(Duration.ofDays(1)));
    try (Stream<Path> l = Files.list(dir)) {
      for (Path p : l.toList()) {
        Files.setLastModifiedTime(p, dayAgo);
      }
    }
  }

  /**
   * The documented exception to "creates no file, changes none": LMDB registers the reader in the
   * reader table of an existing, writable {@code lock.mdb} (so that a writer opening the store
   * meanwhile leaves its pages alone), which changes that file's content and modification time but
   * not its size. No file appears or disappears; every other file keeps every byte and its time.
   */
  @Test
  void readOnly_ofACleanlyClosedStore_changesNothingButLockMdbsReaderTable() throws Exception {
    try (Store s = Lmdb.open(dir)) {
      s.put(b("k"), b("v"));
    }
    backdate();
    Map<String, FileState> before = files();
    try (Store s = readOnly()) {
      assertThat(s.get(b("k"))).isEqualTo(b("v"));
      s.verify();
      assertThat(s.stream(KeyRange.all()).count()).isEqualTo(1);
    }
    Map<String, FileState> after = files();

    assertThat(after.keySet()).isEqualTo(before.keySet()).contains("lock.mdb");
    assertThat(after.get("lock.mdb").size()).isEqualTo(before.get("lock.mdb").size());
    after.remove("lock.mdb");
    before.remove("lock.mdb");
    assertThat(after).isEqualTo(before);
  }

  @Test
  void legacyStore_readOnly_isNotGivenAnIdentity() throws Exception {
    try (Store s = Lmdb.open(dir, "checksums", "false")) {
      s.put(b("k"), b("v"));
    }
    Files.delete(dir.resolve("kv4j.store"));
    try (Store s = readOnly()) {
      assertThat(s.get(b("k"))).isEqualTo(b("v"));
    }
    assertThat(dir.resolve("kv4j.store")).doesNotExist();
  }

  @Test
  void secondOpenInThisJvm_readOnlyOrNot_isLockedClearly() {
    try (Store s = Lmdb.open(dir)) {
      s.put(b("k"), b("v"));
      assertThatThrownBy(this::readOnly)
          .isInstanceOf(StoreLockedException.class)
          .hasMessageContaining("already open in this JVM");
      assertThat(s.get(b("k"))).isEqualTo(b("v"));
      s.put(b("k2"), b("v2"));
    }
    try (Store r = readOnly()) {
      assertThatThrownBy(this::readOnly).isInstanceOf(StoreLockedException.class);
      assertThatThrownBy(() -> Lmdb.open(dir)).isInstanceOf(StoreLockedException.class);
      assertThat(r.get(b("k2"))).isEqualTo(b("v2"));
    }
    try (Store s = Lmdb.open(dir)) {
      assertThat(s.get(b("k2"))).isEqualTo(b("v2"));
    }
  }

  /** LMDB's reader table in lock.mdb lets other processes read while this one writes. */
  @Test
  void readOnlyInAnotherProcess_readsWhileThisOneHasTheStoreOpenForWriting() throws Exception {
    try (Store s = Stores.open(Lmdb.config(dir).durability(Durability.SYNC).build())) {
      s.put(b("k"), b("written before"));
      childReads("k", "VALUE written before");
      s.put(b("k"), b("written later"));
      childReads("k", "VALUE written later");
      assertThat(s.get(b("k"))).isEqualTo(b("written later"));
    }
  }

  /** Reads {@code key} in a child JVM, which must succeed and print {@code expected}. */
  private void childReads(String key, String expected) throws Exception {
    try (ChildProcess c =
        ChildProcess.java(LmdbChildMain.class, "read", dir.toString(), key)
            .jvmOptions("-Xmx128m")
            .start()) {
      c.assertSucceeded(Duration.ofMinutes(2));
      assertThat(c.stdout()).as(c.describe()).contains(expected);
    }
  }
}
