package io.kv4j.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Limits;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The backup frame ({@link BackupCopy}) refuses a target inside the live store by real paths, for
 * every engine: through symbolic links, {@code ..}, and targets that do not exist yet.
 */
class BackupCopyTest {
  @TempDir Path tmp;

  @Test
  void backup_throughALinkIntoTheStore_isRefusedAndWritesNothingThere() throws IOException {
    Path home = Files.createDirectories(tmp.resolve("store"));
    Files.writeString(home.resolve("data"), "live");
    Path link = Files.createSymbolicLink(tmp.resolve("link"), home);
    try (DirStore s = new DirStore(home)) {
      for (Path target :
          List.of(
              link, // the store itself, through a link
              link.resolve("copy"), // a new directory inside it
              link.resolve("a/b/c"), // several levels that do not exist yet
              link.resolve("../store/copy"), // .. after the link
              tmp.resolve("elsewhere/../store/copy"))) {
        assertThatThrownBy(() -> s.backup(target))
            .as(target.toString())
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("engine 'dir'")
            .hasMessageContaining(home.toString())
            .hasMessageContaining(target.toAbsolutePath().normalize().toString())
            .hasMessageContaining("own location");
      }
      assertThat(s.backups).as("the engine was never asked to copy").isZero();
      assertThat(names(home)).as("nothing written into the store").containsExactly("data");
      // Links out of the store, and names that merely start like the store's, are fine.
      Path backups = Files.createDirectories(tmp.resolve("backups"));
      s.backup(Files.createSymbolicLink(tmp.resolve("to-backups"), backups).resolve("one"));
      s.backup(tmp.resolve("store-copy"));
      assertThat(Files.readString(backups.resolve("one/data"))).isEqualTo("copy");
      assertThat(Files.readString(tmp.resolve("store-copy/data"))).isEqualTo("copy");
    }
  }

  @Test
  void backup_ofAStoreOpenedThroughALink_refusesItsRealDirectory() throws IOException {
    Path real = Files.createDirectories(tmp.resolve("real/store"));
    Path alias = Files.createSymbolicLink(tmp.resolve("alias"), real.getParent());
    try (DirStore s = new DirStore(alias.resolve("store"))) {
      assertThatThrownBy(() -> s.backup(real.resolve("keyspaces")))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("own location")
          .hasMessageContaining(real.toString());
      // A target that holds the store is refused too (it is not empty, but refused for that first).
      assertThatThrownBy(() -> s.backup(real.getParent()))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("own location");
      assertThat(names(real)).isEmpty();
    }
  }

  private static List<String> names(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  /** A store whose location is a directory; its backup writes one file. */
  private static final class DirStore extends AbstractStore {
    int backups;

    DirStore(Path home) {
      super(
          new StoreInfo(
              "dir",
              Set.of(Feature.BACKUP),
              new Limits(511, 1 << 24),
              Durability.SYNC,
              home.toString(),
              false));
    }

    @Override
    protected byte[] doGet(byte[] key) {
      return null;
    }

    @Override
    protected void doPut(byte[] key, byte[] value) {}

    @Override
    protected void doDelete(byte[] key) {}

    @Override
    protected AbstractCursor doScan(KeyRange range) {
      throw new UnsupportedOperationException("no scans");
    }

    @Override
    protected void doWrite(WriteBatch batch) {}

    @Override
    protected void doSync() {}

    @Override
    protected void doBackup(Path target) throws IOException {
      backups++;
      Files.writeString(target.resolve("data"), "copy", StandardCharsets.UTF_8);
    }

    @Override
    protected StoreStats doStats() {
      return new StoreStats(0, true, 0, Map.of());
    }

    @Override
    protected void doClose() {}
  }
}
