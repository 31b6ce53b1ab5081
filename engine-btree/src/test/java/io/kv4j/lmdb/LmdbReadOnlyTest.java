package io.kv4j.lmdb;

import static io.kv4j.lmdb.Lmdb.b;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreLockedException;
import io.kv4j.Stores;
import io.kv4j.tck.ChildProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LmdbReadOnlyTest {
  @TempDir Path dir;

  private Store readOnly() {
    return Stores.open(Lmdb.config(dir).readOnly(true).build());
  }

  private List<String> listing() throws Exception {
    try (Stream<Path> l = Files.list(dir)) {
      return l.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  @Test
  void readOnly_withoutLockFiles_readsWithoutCreatingAnyFile() throws Exception {
    try (Store s = Lmdb.open(dir)) {
      s.put(b("k"), b("v"));
    }
    Files.delete(dir.resolve("lock.mdb"));
    Files.deleteIfExists(dir.resolve("kv4j.lock"));
    List<String> before = listing();
    long dataSize = Files.size(dir.resolve("data.mdb"));
    try (Store s = readOnly()) {
      assertThat(s.get(b("k"))).isEqualTo(b("v"));
      s.verify();
      assertThat(listing()).isEqualTo(before);
    }
    assertThat(listing()).isEqualTo(before).doesNotContain("lock.mdb", "kv4j.lock");
    assertThat(Files.size(dir.resolve("data.mdb"))).isEqualTo(dataSize);
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
