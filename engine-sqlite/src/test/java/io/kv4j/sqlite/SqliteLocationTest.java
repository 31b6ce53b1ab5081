package io.kv4j.sqlite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Store;
import io.kv4j.Stores;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The location is a directory: a path that names a database file is refused with a hint. */
class SqliteLocationTest {
  @TempDir Path tmp;

  @Test
  void open_pathEndingInDotDb_isRefusedWithTheDirectoryHint_andCreatesNothing() {
    Path file = tmp.resolve("local.db");
    assertThatThrownBy(() -> Stores.open("sqlite:" + file).close())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("sqlite:DIR takes a directory")
        .hasMessageContaining("DIR/kv.sqlite")
        .hasMessageContaining("sqlite:" + tmp.resolve("local"));
    assertThat(file).doesNotExist();
  }

  @Test
  void open_anExistingSqlite3File_isRefusedNotTouched() throws Exception {
    Path file = tmp.resolve("app.sqlite3");
    Files.writeString(file, "not ours", StandardCharsets.UTF_8);
    assertThatThrownBy(() -> Stores.open("sqlite:" + file).close())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("takes a directory");
    assertThat(Files.readString(file, StandardCharsets.UTF_8)).isEqualTo("not ours");
  }

  @Test
  void open_anExistingDirectoryNamedLikeAFile_isAStoreAsBefore() {
    // A directory whose name ends in .db that already exists (made by an earlier version) opens.
    Path existing = tmp.resolve("old.db");
    try (Store s = Stores.open("sqlite:" + tmp.resolve("seed"))) {
      s.put(new byte[] {1}, new byte[] {2});
    }
    assertThat(tmp.resolve("seed").toFile().renameTo(existing.toFile())).isTrue();
    try (Store s = Stores.open("sqlite:" + existing)) {
      assertThat(s.get(new byte[] {1})).containsExactly(2);
    }
  }
}
