package io.kv4j.rocksdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreIOException;
import io.kv4j.Stores;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Read-only opens: RocksDB's read-only mode, no lock, nothing created or changed in the directory,
 * and several of them beside one writer, each a point-in-time view.
 */
class RocksDbReadOnlyTest {
  @TempDir Path tmp;

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static StoreConfig.Builder config(Path dir) {
    return StoreConfig.builder("rocksdb").path(dir).durability(Durability.SYNC);
  }

  /** Name, size and modification time of every file. */
  private static TreeMap<String, String> snapshot(Path dir) throws IOException {
    TreeMap<String, String> out = new TreeMap<>();
    try (Stream<Path> s = Files.list(dir)) {
      for (Path p : (Iterable<Path>) s::iterator) {
        out.put(
            p.getFileName().toString(),
            Files.size(p) + " " + Files.getLastModifiedTime(p).toMillis());
      }
    }
    return out;
  }

  private static long count(Store s) {
    long n = 0;
    try (Cursor c = s.scan(KeyRange.all())) {
      while (c.hasNext()) {
        c.next();
        n++;
      }
    }
    return n;
  }

  /**
   * A directory made unwritable (chmod 555). Tests may run as root, whom the mode does not stop, so
   * the check is that no file appears, disappears or changes, for a store closed cleanly and for
   * one whose data is still in the WAL.
   */
  @Test
  void readOnly_unwritableDirectory_opensAndWritesNothing() throws IOException {
    Path flushed = tmp.resolve("flushed");
    try (Store s = Stores.open(config(flushed).build())) {
      for (int i = 0; i < 1000; i++) {
        s.put(b("k" + i), b("v" + i));
      }
    }
    Path inWal = tmp.resolve("in-wal");
    Store w = Stores.open(config(inWal).build());
    for (int i = 0; i < 1000; i++) {
      w.put(b("k" + i), b("v" + i));
    }
    ((RocksDbStore) w).closeWithoutFlush();
    for (Path dir : List.of(flushed, inWal)) {
      TreeMap<String, String> before = snapshot(dir);
      Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("r-xr-xr-x"));
      try {
        for (int round = 0; round < 2; round++) {
          try (Store s = Stores.open(config(dir).readOnly(true).build())) {
            assertThat(s.get(b("k999"))).isEqualTo(b("v999"));
            assertThat(count(s)).isEqualTo(1000);
            s.verify();
            assertThatThrownBy(() -> s.put(b("x"), b("y")))
                .isInstanceOf(UnsupportedOperationException.class);
          }
        }
      } finally {
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
      }
      assertThat(snapshot(dir)).as("%s after read-only opens", dir).isEqualTo(before);
    }
  }

  /**
   * Several read-only stores while one writer holds the directory; each sees its open's view. The
   * writer's automatic compactions are off so that only the manual one (round 2) deletes table
   * files: readers opened after it can verify every file of their view; earlier ones may find a
   * file of their view deleted by the writer, which verify reports as an I/O error, not damage.
   */
  @Test
  void readOnly_besideAWriter_severalOpensEachSeeAPointInTimeView() {
    Path dir = tmp.resolve("live");
    List<Store> readers = new ArrayList<>();
    try (Store w =
        Stores.open(
            config(dir)
                .option("write-buffer-size", "64KiB")
                .option("rocksdb-options", "disable_auto_compactions=true")
                .build())) {
      int written = 0;
      for (int round = 0; round < 5; round++) {
        for (int i = 0; i < 500; i++, written++) {
          w.put(b(String.format("k%06d", written)), new byte[100]);
        }
        if (round == 2) {
          w.compact(); // table files replaced under earlier readers
        }
        Store r = Stores.open(config(dir).readOnly(true).build());
        readers.add(r);
        assertThat(r.info().readOnly()).isTrue();
        assertThat(count(r))
            .as("reader %d sees what was written before it opened", round)
            .isEqualTo(written);
      }
      w.put(b("after"), b("x"));
      for (int i = 0; i < readers.size(); i++) {
        Store r = readers.get(i);
        assertThat(r.get(b("after"))).as("reader %d is point-in-time", i).isNull();
        assertThat(count(r)).isEqualTo(500L * (i + 1));
        if (i > 2) {
          r.verify();
        }
      }
      assertThat(w.get(b("after"))).isEqualTo(b("x"));
    } finally {
      readers.forEach(Store::close);
    }
  }

  @Test
  void readOnly_neverCreates() throws IOException {
    Path dir = tmp.resolve("empty");
    Files.createDirectories(dir);
    assertThatThrownBy(() -> Stores.open(config(dir).readOnly(true).build()))
        .isInstanceOf(StoreIOException.class);
    try (Stream<Path> s = Files.list(dir)) {
      assertThat(s).isEmpty();
    }
  }
}
