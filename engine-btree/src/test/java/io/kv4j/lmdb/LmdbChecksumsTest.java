package io.kv4j.lmdb;

import static io.kv4j.lmdb.Lmdb.b;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreCorruptedException;
import io.kv4j.Stores;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LmdbChecksumsTest {
  @TempDir Path dir;

  @Test
  void encode_followsTheDocumentedLayout() {
    byte[] key = b("key");
    byte[] value = b("value");
    byte[] frame = ValueFrame.encode(key, value);
    CRC32C crc = new CRC32C();
    crc.update(new byte[] {0, 3});
    crc.update(key);
    crc.update(value);
    int want = (int) crc.getValue();
    assertThat(frame).hasSize(4 + value.length);
    assertThat(ByteBuffer.wrap(frame, 0, 4).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt())
        .isEqualTo(want);
    assertThat(java.util.Arrays.copyOfRange(frame, 4, frame.length)).isEqualTo(value);
    // The key's length is covered: moving a byte from key to value changes the sum.
    assertThat(ValueFrame.checksum(b("ke"), b("yvalue"))).isNotEqualTo(want);
  }

  @Test
  void newStore_hasChecksumsByDefault_andRecordsFormat4() throws Exception {
    try (Store s = Lmdb.open(dir)) {
      assertThat(s.info().features()).contains(Feature.CHECKSUMS);
      s.put(b("k"), b("v"));
    }
    assertThat(Files.readString(dir.resolve("kv4j.store"))).contains("format=4");
  }

  @Test
  void checksumsFalse_storesRawValues_inFormat3_withoutTheFeature() throws Exception {
    try (Store s = Lmdb.open(dir, "checksums", "false")) {
      assertThat(s.info().features()).doesNotContain(Feature.CHECKSUMS);
      s.put(b("k"), b("v"));
    }
    assertThat(Files.readString(dir.resolve("kv4j.store"))).contains("format=3");
    // Reopened without the option: the store's format wins.
    try (Store s = Lmdb.open(dir)) {
      assertThat(s.info().features()).doesNotContain(Feature.CHECKSUMS);
      assertThat(s.get(b("k"))).isEqualTo(b("v"));
      s.verify();
    }
  }

  @Test
  void explicitOptionConflictingWithTheStore_isRefusedNamingBoth() {
    try (Store s = Lmdb.open(dir)) {
      s.put(b("k"), b("v"));
    }
    assertThatThrownBy(() -> Lmdb.open(dir, "checksums", "false"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("checksums=false")
        .hasMessageContaining("format 4")
        .hasMessageContaining("kv4j copy");
    Path raw = dir.resolve("raw");
    try (Store s = Lmdb.open(raw, "checksums", "false")) {
      s.put(b("k"), b("v"));
    }
    assertThatThrownBy(() -> Lmdb.open(raw, "checksums", "true"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("checksums=true")
        .hasMessageContaining("format 3");
    // Matching explicit options open.
    try (Store s = Lmdb.open(dir, "checksums", "true")) {
      assertThat(s.get(b("k"))).isEqualTo(b("v"));
    }
  }

  @Test
  void legacyStoreWithoutIdentity_isAdoptedRaw() throws Exception {
    Lmdb.legacy(dir, false, java.util.Map.of("k", "v")); // as made by kv4j before identities
    try (Store s = Lmdb.open(dir)) {
      assertThat(s.info().features()).doesNotContain(Feature.CHECKSUMS);
      assertThat(s.get(b("k"))).isEqualTo(b("v"));
    }
    assertThat(Files.readString(dir.resolve("kv4j.store"))).contains("format=1");
  }

  @Test
  void rawStoreOfFormat3ThatLostItsIdentity_isStillReadFromItsNamedDatabases() throws Exception {
    try (Store s = Lmdb.open(dir, "checksums", "false")) {
      s.put(b("k"), b("v"));
      s.keyspace("users").put(b("u"), b("1"));
    }
    Files.delete(dir.resolve("kv4j.store"));
    try (Store s = Lmdb.open(dir)) {
      assertThat(s.info().features()).doesNotContain(Feature.CHECKSUMS).contains(Feature.KEYSPACES);
      assertThat(s.get(b("k"))).isEqualTo(b("v"));
      assertThat(s.get(b("default"))).isNull();
      assertThat(s.keyspaces()).containsExactly("users");
    }
    assertThat(Files.readString(dir.resolve("kv4j.store"))).contains("format=3");
  }

  @Test
  void framedStoreThatLostItsIdentity_isStillReadFramed() throws Exception {
    try (Store s = Lmdb.open(dir)) {
      for (int i = 0; i < 20; i++) {
        s.put(b("k" + i), b("v" + i));
      }
    }
    Files.delete(dir.resolve("kv4j.store"));
    try (Store s = Lmdb.open(dir)) {
      assertThat(s.info().features()).contains(Feature.CHECKSUMS);
      assertThat(s.get(b("k7"))).isEqualTo(b("v7"));
    }
  }

  @Test
  void flippedValueByte_isReportedByGetScanAndVerify_namingTheFile() throws Exception {
    byte[] value = new byte[100];
    java.util.Arrays.fill(value, (byte) 0x5A);
    try (Store s = Lmdb.open(dir)) {
      s.put(b("a"), b("fine"));
      s.put(b("victim"), value);
    }
    Path data = dir.resolve("data.mdb");
    long at = indexOf(Files.readAllBytes(data), value);
    assertThat(at).as("value found in the file").isPositive();
    try (FileChannel ch =
        FileChannel.open(data, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.wrap(new byte[] {0x5B}), at + 50);
    }
    try (Store s = Lmdb.open(dir)) {
      assertThat(s.get(b("a"))).isEqualTo(b("fine"));
      assertThatThrownBy(() -> s.get(b("victim")))
          .isInstanceOf(StoreCorruptedException.class)
          .hasMessageContaining("data.mdb")
          .hasMessageContaining("CRC32C")
          .satisfies(
              e -> {
                StoreCorruptedException c = (StoreCorruptedException) e;
                assertThat(c.file()).isEqualTo(data.toRealPath());
                assertThat(c.offset()).isBetween(at - 4, at);
              });
      assertThatThrownBy(() -> s.forEach(KeyRange.all(), e -> {}))
          .isInstanceOf(StoreCorruptedException.class);
      assertThatThrownBy(s::verify).isInstanceOf(StoreCorruptedException.class);
    }
  }

  @Test
  void verify_passesOnAHealthyStore_withOverflowValuesAndDeletes() {
    try (Store s = Stores.open(Lmdb.config(dir).build())) {
      for (int i = 0; i < 500; i++) {
        s.put(b(String.format("k%04d", i)), new byte[i % 50 == 0 ? 9000 : 30]);
      }
      for (int i = 0; i < 500; i += 3) {
        s.delete(b(String.format("k%04d", i)));
      }
      s.verify();
    }
  }

  private static long indexOf(byte[] hay, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= hay.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (hay[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }
}
