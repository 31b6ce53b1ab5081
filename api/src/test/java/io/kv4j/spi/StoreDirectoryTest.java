package io.kv4j.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreLockedException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StoreDirectoryTest {
  private static final StoreDirectory.Layout ALPHA =
      new StoreDirectory.Layout("alpha", 2, n -> n.startsWith("alpha."), Set.of("alpha.data"));
  private static final StoreDirectory.Layout BETA =
      new StoreDirectory.Layout("beta", 1, n -> n.startsWith("beta."), Set.of());

  @TempDir Path tmp;

  private StoreConfig config(Path dir, boolean create, boolean readOnly) {
    return StoreConfig.builder("memory")
        .path(dir)
        .createIfMissing(create)
        .readOnly(readOnly)
        .build();
  }

  private Path created(Path dir) throws IOException {
    try (StoreDirectory d = StoreDirectory.open(config(dir, true, false), ALPHA)) {
      assertThat(d.isNew()).isTrue();
      Files.writeString(d.path().resolve("alpha.data"), "data");
      d.created();
    }
    return dir;
  }

  @Test
  void open_missingDirectory_createsNewStoreAndRecordsIdentityOnCreated() throws IOException {
    Path dir = created(tmp.resolve("s"));
    String id = Files.readString(dir.resolve(StoreDirectory.IDENTITY_FILE));
    assertThat(id).contains("engine=alpha\n").contains("format=2\n").contains("crc32c=");
    try (StoreDirectory d = StoreDirectory.open(config(dir, false, false), ALPHA)) {
      assertThat(d.isNew()).isFalse();
      assertThat(d.format()).isEqualTo(2);
    }
  }

  @Test
  void open_missingDirectoryWithoutCreate_failsAndCreatesNothing() {
    Path dir = tmp.resolve("absent");
    assertThatThrownBy(() -> StoreDirectory.open(config(dir, false, false), ALPHA))
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining("create-if-missing is false")
        .hasMessageContaining("alpha");
    assertThatThrownBy(() -> StoreDirectory.open(config(dir, true, true), ALPHA))
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining("read-only stores are never created");
    assertThat(dir).doesNotExist();
  }

  @Test
  void open_anotherEnginesStore_failsNamingBothEnginesAndTheCopyCommand() throws IOException {
    Path dir = created(tmp.resolve("s"));
    assertThatThrownBy(() -> StoreDirectory.open(config(dir, true, false), BETA))
        .isInstanceOf(StoreCorruptedException.class)
        .hasMessageContaining("'alpha' store")
        .hasMessageContaining("engine 'beta'")
        .hasMessageContaining("kv4j copy --from alpha:");
    assertThat(Files.readString(dir.resolve("alpha.data"))).isEqualTo("data");
    // The failed open released the lock.
    try (StoreDirectory d = StoreDirectory.open(config(dir, true, false), ALPHA)) {
      assertThat(d.isNew()).isFalse();
    }
  }

  @Test
  void foreignEngine_tellsAnotherEnginesStoreFromDamage() throws IOException {
    Path dir = created(tmp.resolve("s"));
    StoreCorruptedException byIdentity =
        catchThrowableOfType(
            StoreCorruptedException.class,
            () -> StoreDirectory.open(config(dir, true, false), BETA));
    assertThat(StoreDirectory.foreignEngine(byIdentity)).contains("alpha");

    Path lmdb = Files.createDirectories(tmp.resolve("lmdb"));
    Files.writeString(lmdb.resolve("data.mdb"), "lmdb");
    StoreCorruptedException byFiles =
        catchThrowableOfType(
            StoreCorruptedException.class,
            () -> StoreDirectory.open(config(lmdb, true, false), ALPHA));
    assertThat(StoreDirectory.foreignEngine(byFiles)).contains("lmdb");

    Files.write(dir.resolve("alpha.data"), new byte[0]);
    StoreCorruptedException damaged =
        catchThrowableOfType(
            StoreCorruptedException.class,
            () -> StoreDirectory.open(config(dir, true, false), ALPHA));
    assertThat(StoreDirectory.foreignEngine(damaged)).isEmpty();
    assertThat(
            StoreDirectory.foreignEngine(
                new StoreCorruptedException("record checksum fails", dir, 12)))
        .isEmpty();
  }

  @Test
  void open_requiredFileMissingOrEmpty_isCorruptedNotANewStore() throws IOException {
    Path dir = created(tmp.resolve("s"));
    Files.write(dir.resolve("alpha.data"), new byte[0]);
    assertThatThrownBy(() -> StoreDirectory.open(config(dir, true, false), ALPHA))
        .isInstanceOf(StoreCorruptedException.class)
        .hasMessageContaining("is empty")
        .satisfies(
            e ->
                assertThat(((StoreCorruptedException) e).file())
                    .isEqualTo(dir.toRealPath().resolve("alpha.data")));
    Files.delete(dir.resolve("alpha.data"));
    assertThatThrownBy(() -> StoreDirectory.open(config(dir, true, false), ALPHA))
        .isInstanceOf(StoreCorruptedException.class)
        .hasMessageContaining("is missing");
    assertThat(dir.resolve("alpha.data")).doesNotExist();
  }

  @Test
  void open_damagedIdentity_isCorrupted() throws IOException {
    Path dir = created(tmp.resolve("s"));
    Path id = dir.resolve(StoreDirectory.IDENTITY_FILE);
    byte[] raw = Files.readAllBytes(id);
    raw[raw.length / 3] ^= 0x04;
    Files.write(id, raw);
    assertThatThrownBy(() -> StoreDirectory.open(config(dir, true, false), ALPHA))
        .isInstanceOf(StoreCorruptedException.class)
        .hasMessageContaining("identity file")
        .hasMessageContaining("damaged");
    Files.write(id, new byte[0]);
    assertThatThrownBy(() -> StoreDirectory.open(config(dir, true, true), ALPHA))
        .isInstanceOf(StoreCorruptedException.class)
        .hasMessageContaining("it is empty");
  }

  @Test
  void open_newerFormat_isRefused() throws IOException {
    Path dir = created(tmp.resolve("s"));
    StoreDirectory.Layout older =
        new StoreDirectory.Layout("alpha", 1, n -> n.startsWith("alpha."), Set.of());
    assertThatThrownBy(() -> StoreDirectory.open(config(dir, true, false), older))
        .isInstanceOf(StoreCorruptedException.class)
        .hasMessageContaining("format 2");
  }

  @Test
  void open_ownFilesWithoutIdentity_adoptsAndRecordsIdentity() throws IOException {
    Path dir = Files.createDirectories(tmp.resolve("legacy"));
    Files.writeString(dir.resolve("alpha.data"), "old");
    try (StoreDirectory d = StoreDirectory.open(config(dir, false, true), ALPHA)) {
      assertThat(d.isNew()).isFalse();
      assertThat(d.format()).isEqualTo(1);
    }
    // Read-only wrote nothing: no identity and no lock file.
    assertThat(dir.resolve(StoreDirectory.IDENTITY_FILE)).doesNotExist();
    assertThat(dir.resolve(DirectoryLock.FILE_NAME)).doesNotExist();
    try (StoreDirectory d = StoreDirectory.open(config(dir, false, false), ALPHA)) {
      assertThat(d.isNew()).isFalse();
      // Not stamped before the engine has opened and checked the files.
      assertThat(dir.resolve(StoreDirectory.IDENTITY_FILE)).doesNotExist();
      d.created();
    }
    assertThat(Files.readString(dir.resolve(StoreDirectory.IDENTITY_FILE)))
        .contains("engine=alpha")
        .contains("format=1");
  }

  @Test
  void open_foreignFilesWithoutIdentity_isRefusedListingThemAndNamingTheEngine()
      throws IOException {
    Path dir = Files.createDirectories(tmp.resolve("other"));
    Files.writeString(dir.resolve("notes.txt"), "mine");
    assertThatThrownBy(() -> StoreDirectory.open(config(dir, true, false), ALPHA))
        .isInstanceOf(StoreCorruptedException.class)
        .hasMessageContaining("notes.txt")
        .hasMessageContaining("missing or empty directory");
    Files.writeString(dir.resolve("data.mdb"), "lmdb");
    assertThatThrownBy(() -> StoreDirectory.open(config(dir, true, false), ALPHA))
        .isInstanceOf(StoreCorruptedException.class)
        .hasMessageContaining("'lmdb' store");
    assertThat(dir.resolve(StoreDirectory.IDENTITY_FILE)).doesNotExist();
  }

  @Test
  void open_emptyDirectory_isNewOnlyWhenCreating() throws IOException {
    Path dir = Files.createDirectories(tmp.resolve("empty"));
    assertThatThrownBy(() -> StoreDirectory.open(config(dir, false, false), ALPHA))
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining("empty");
    assertThatThrownBy(() -> StoreDirectory.open(config(dir, true, true), ALPHA))
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining("read-only");
    try (StoreDirectory d = StoreDirectory.open(config(dir, true, false), ALPHA)) {
      assertThat(d.isNew()).isTrue();
      // Not yet created: a crash now leaves no identity and an empty directory again.
      assertThat(dir.resolve(StoreDirectory.IDENTITY_FILE)).doesNotExist();
    }
  }

  @Test
  void open_readWriteLocksButReadOnlyDoesNot() throws IOException {
    Path dir = created(tmp.resolve("s"));
    try (StoreDirectory w = StoreDirectory.open(config(dir, false, false), ALPHA)) {
      assertThatThrownBy(() -> StoreDirectory.open(config(dir, false, false), ALPHA))
          .isInstanceOf(StoreLockedException.class);
      try (StoreDirectory r = StoreDirectory.open(config(dir, false, true), ALPHA)) {
        assertThat(r.readOnly()).isTrue();
        assertThatThrownBy(r::created).isInstanceOf(IllegalStateException.class);
      }
      assertThat(w.readOnly()).isFalse();
    }
  }

  @Test
  void open_readOnlyOnUnwritableDirectory_opens() throws IOException {
    Path dir = created(tmp.resolve("s"));
    Files.delete(dir.resolve(DirectoryLock.FILE_NAME));
    assertThat(dir.toFile().setWritable(false, false)).isTrue();
    try (StoreDirectory r = StoreDirectory.open(config(dir, false, true), ALPHA)) {
      assertThat(r.isNew()).isFalse();
    } finally {
      dir.toFile().setWritable(true, false);
    }
    assertThat(dir.resolve(DirectoryLock.FILE_NAME)).doesNotExist();
  }

  @Test
  void identityFile_isTextWithChecksumLast() throws IOException {
    Path dir = created(tmp.resolve("s"));
    String id =
        new String(
            Files.readAllBytes(dir.resolve(StoreDirectory.IDENTITY_FILE)), StandardCharsets.UTF_8);
    assertThat(id.lines()).last().asString().matches("crc32c=[0-9a-f]{8}");
    assertThat(dir.resolve(StoreDirectory.IDENTITY_FILE + ".tmp")).doesNotExist();
  }
}
