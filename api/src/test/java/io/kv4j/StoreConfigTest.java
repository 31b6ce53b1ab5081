package io.kv4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StoreConfigTest {
  @TempDir Path tmp;

  @Test
  void builder_defaultsAreDocumentedOnes() {
    StoreConfig c = StoreConfig.builder("memory").build();
    assertThat(c.engine()).isEqualTo("memory");
    assertThat(c.path()).isNull();
    assertThat(c.durability()).isEqualTo(Durability.SYNC);
    assertThat(c.createIfMissing()).isTrue();
    assertThat(c.readOnly()).isFalse();
    assertThat(c.options()).isEmpty();
  }

  @Test
  void builder_engineIdIsCaseInsensitive() {
    assertThat(StoreConfig.builder(" MEMORY ").build().engine()).isEqualTo("memory");
  }

  @Test
  void builder_blankEngine_isRejected() {
    assertThatThrownBy(() -> StoreConfig.builder(" "))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("blank");
    assertThatThrownBy(() -> StoreConfig.builder(null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void builder_unknownEngine_listsAvailableAndArtifact() {
    assertThatThrownBy(() -> StoreConfig.builder("lmdb-typo").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown engine 'lmdb-typo'")
        .hasMessageContaining("available: ")
        .hasMessageContaining("memory");
  }

  @Test
  void unknownKnownEngine_namesTheArtifactToAdd() {
    assertThatThrownBy(() -> Stores.provider("rocksdb"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("io.kv4j:kv4j-engine-lsm");
  }

  @Test
  void builder_unknownOption_listsValidOnes() {
    assertThatThrownBy(() -> StoreConfig.builder("memory").option("segment-size", "1").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown option 'segment-size'")
        .hasMessageContaining("engine 'memory'")
        .hasMessageContaining("valid options: durability, create-if-missing, read-only");
  }

  @Test
  void builder_nullArguments_areRejected() {
    StoreConfig.Builder b = StoreConfig.builder("memory");
    assertThatThrownBy(() -> b.path(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> b.durability(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> b.option((String) null, "x")).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> b.option("x", null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("x");
  }

  @Test
  void parse_memoryWithoutPath() {
    StoreConfig c = StoreConfig.parse("memory:");
    assertThat(c.engine()).isEqualTo("memory");
    assertThat(c.path()).isNull();
  }

  @Test
  void parse_pathAndCommonSettings() {
    StoreConfig c =
        StoreConfig.parse(
            "memory:/var/lib/my%20app/data?durability=buffered&read-only=true&create-if-missing=false");
    assertThat(c.path()).isEqualTo(Path.of("/var/lib/my app/data"));
    assertThat(c.durability()).isEqualTo(Durability.BUFFERED);
    assertThat(c.readOnly()).isTrue();
    assertThat(c.createIfMissing()).isFalse();
  }

  @Test
  void parse_tripleSlashAndRelativePaths() {
    assertThat(StoreConfig.parse("memory:///abs/dir").path()).isEqualTo(Path.of("/abs/dir"));
    assertThat(StoreConfig.parse("memory:rel/dir").path()).isEqualTo(Path.of("rel/dir"));
  }

  @Test
  void parse_noEngine_isRejected() {
    assertThatThrownBy(() -> StoreConfig.parse("/just/a/path"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("has no engine");
    assertThatThrownBy(() -> StoreConfig.parse(":x")).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void parse_parameterWithoutValue_isRejected() {
    assertThatThrownBy(() -> StoreConfig.parse("memory:?durability"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'durability'");
  }

  @Test
  void parse_badDurability_namesKeyValueAndExpected() {
    assertThatThrownBy(() -> StoreConfig.parse("memory:?durability=fast"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'durability'")
        .hasMessageContaining("'fast'")
        .hasMessageContaining("sync or buffered");
  }

  @Test
  void parse_badBoolean_namesKeyValueAndExpected() {
    assertThatThrownBy(() -> StoreConfig.parse("memory:?read-only=yes"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'read-only'")
        .hasMessageContaining("'yes'")
        .hasMessageContaining("true or false");
  }

  @Test
  void toUri_roundTrips() {
    StoreConfig c =
        StoreConfig.builder("memory")
            .path(Path.of("/data/a b/c:d"))
            .durability(Durability.BUFFERED)
            .readOnly(true)
            .createIfMissing(false)
            .build();
    assertThat(StoreConfig.parse(c.toUri())).isEqualTo(c);
    assertThat(c.toString()).isEqualTo(c.toUri());
  }

  @Test
  void fromProperties_readsPrefixedKeysAndIgnoresOthers() {
    Properties p = new Properties();
    p.setProperty("kv4j.engine", "memory");
    p.setProperty("kv4j.path", "/tmp/x");
    p.setProperty("kv4j.durability", "BUFFERED");
    p.setProperty("server.port", "8080");
    StoreConfig c = StoreConfig.fromProperties(p);
    assertThat(c.engine()).isEqualTo("memory");
    assertThat(c.path()).isEqualTo(Path.of("/tmp/x"));
    assertThat(c.durability()).isEqualTo(Durability.BUFFERED);
    assertThat(StoreConfig.fromProperties(c.toProperties())).isEqualTo(c);
  }

  @Test
  void fromProperties_missingEngine_isRejected() {
    Properties p = new Properties();
    p.setProperty("kv4j.path", "/tmp/x");
    assertThatThrownBy(() -> StoreConfig.fromProperties(p))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("kv4j.engine");
  }

  @Test
  void fromProperties_unknownKey_isRejected() {
    Properties p = new Properties();
    p.setProperty("kv4j.engine", "memory");
    p.setProperty("kv4j.cache", "1");
    assertThatThrownBy(() -> StoreConfig.fromProperties(p))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown option 'cache'");
  }

  @Test
  void load_readsAFile() throws IOException {
    Path f = tmp.resolve("kv4j.properties");
    Files.writeString(f, "kv4j.engine=memory\nkv4j.durability=buffered\n", StandardCharsets.UTF_8);
    assertThat(StoreConfig.load(f).durability()).isEqualTo(Durability.BUFFERED);
  }

  @Test
  void load_missingFile_isStoreIOExceptionNamingIt() {
    Path f = tmp.resolve("nope.properties");
    assertThatThrownBy(() -> StoreConfig.load(f))
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining("nope.properties");
  }

  @Test
  void withPath_keepsOtherSettings() {
    StoreConfig c = StoreConfig.builder("memory").durability(Durability.BUFFERED).build();
    StoreConfig moved = c.withPath(tmp);
    assertThat(moved.path()).isEqualTo(tmp);
    assertThat(moved.durability()).isEqualTo(Durability.BUFFERED);
  }

  @Test
  void stores_openByUri_givesWorkingStore() {
    try (Store s = Stores.open("memory:?durability=buffered")) {
      s.put(new byte[] {1}, new byte[] {2});
      assertThat(s.get(new byte[] {1})).containsExactly(2);
      assertThat(s.info().durability()).isEqualTo(Durability.BUFFERED);
    }
  }

  @Test
  void stores_providers_includesMemoryOnce() {
    assertThat(Stores.providers()).extracting(p -> p.id()).containsOnlyOnce("memory");
  }
}
