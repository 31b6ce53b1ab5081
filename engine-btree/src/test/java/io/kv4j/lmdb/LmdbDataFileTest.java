package io.kv4j.lmdb;

import static io.kv4j.lmdb.Lmdb.b;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Store;
import io.kv4j.StoreCorruptedException;
import java.io.RandomAccessFile;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lmdbjava.Dbi;
import org.lmdbjava.DbiFlags;
import org.lmdbjava.Env;
import org.lmdbjava.EnvFlags;
import org.lmdbjava.Txn;

/** The data file checks made before LMDB maps the file (no mapping happens when they fail). */
class LmdbDataFileTest {
  @TempDir Path dir;

  private void fill(int keys) {
    try (Store s = Lmdb.open(dir)) {
      for (int i = 0; i < keys; i++) {
        s.put(b(String.format("key%05d", i)), new byte[200]);
      }
    }
  }

  @Test
  void truncatedToHalf_failsTheOpen_namingFileExpectedAndActualSize() throws Exception {
    fill(2000);
    Path data = dir.resolve("data.mdb");
    long half = Files.size(data) / 2;
    try (FileChannel ch = FileChannel.open(data, StandardOpenOption.WRITE)) {
      ch.truncate(half);
    }
    long expected;
    try (FileChannel ch = FileChannel.open(data)) {
      expected = MetaPages.read(ch, data, "t").requiredSize();
    }
    assertThatThrownBy(() -> Lmdb.open(dir))
        .isInstanceOf(StoreCorruptedException.class)
        .hasMessageContaining(data.toRealPath().toString())
        .hasMessageContaining("is " + half + " bytes")
        .hasMessageContaining(expected + " bytes")
        .hasMessageContaining("truncated");
    assertThat(Files.size(data)).as("a failed open shortens nothing").isEqualTo(half);
  }

  @Test
  void deletedOrEmptiedDataFile_isCorruption_neverANewStore() throws Exception {
    fill(10);
    Path data = dir.resolve("data.mdb");
    try (FileChannel ch = FileChannel.open(data, StandardOpenOption.WRITE)) {
      ch.truncate(0);
    }
    assertThatThrownBy(() -> Lmdb.open(dir))
        .isInstanceOf(StoreCorruptedException.class)
        .hasMessageContaining("data.mdb");
    assertThat(Files.size(data)).isZero();
    Files.delete(data);
    assertThatThrownBy(() -> Lmdb.open(dir))
        .isInstanceOf(StoreCorruptedException.class)
        .hasMessageContaining("missing");
    assertThat(data).doesNotExist();
  }

  @Test
  void badMagic_orTooShortForTheMetaPages_isCorruption() throws Exception {
    fill(10);
    Path data = dir.resolve("data.mdb");
    try (RandomAccessFile f = new RandomAccessFile(data.toFile(), "rw")) {
      f.seek(16);
      f.writeInt(0x12345678);
    }
    assertThatThrownBy(() -> Lmdb.open(dir))
        .isInstanceOf(StoreCorruptedException.class)
        .hasMessageContaining("magic");
    try (FileChannel ch = FileChannel.open(data, StandardOpenOption.WRITE)) {
      ch.truncate(100);
    }
    assertThatThrownBy(() -> Lmdb.open(dir))
        .isInstanceOf(StoreCorruptedException.class)
        .hasMessageContaining("too short");
  }

  @Test
  void fileGrownBeyondItsPages_opens() throws Exception {
    fill(10);
    try (RandomAccessFile f = new RandomAccessFile(dir.resolve("data.mdb").toFile(), "rw")) {
      f.setLength(f.length() + (1 << 20));
    }
    try (Store s = Lmdb.open(dir)) {
      assertThat(s.get(b("key00003"))).hasSize(200);
      s.verify();
    }
  }

  /**
   * LMDB does not write pages a transaction allocated and freed again, so a healthy file can end
   * before its last pages; such a file (made here by raw LMDB, as the engine before this check did)
   * must open: the page walk finds every page in use inside the file.
   */
  @Test
  void healthyFileEndingBeforeItsFreeLastPages_opens() throws Exception {
    Files.createDirectories(dir);
    try (Env<byte[]> env =
        Env.create(ArrayProxy.INSTANCE)
            .setMapSize(64 << 20)
            .setMaxDbs(1)
            .open(dir.toFile(), EnvFlags.MDB_NOTLS)) {
      Dbi<byte[]> db = env.openDbi((byte[]) null, DbiFlags.MDB_CREATE);
      try (Txn<byte[]> txn = env.txnWrite()) {
        db.put(txn, b("k"), b("v"));
        txn.commit();
      } finally {
        ArrayProxy.release();
      }
      // Pages split off and merged back in one transaction become "loose" pages: freed
      // without ever being written.
      try (Txn<byte[]> txn = env.txnWrite()) {
        for (int i = 0; i < 400; i++) {
          db.put(txn, b(String.format("tmp%05d", i)), new byte[300]);
        }
        for (int i = 0; i < 400; i++) {
          db.delete(txn, b(String.format("tmp%05d", i)));
        }
        txn.commit();
      } finally {
        ArrayProxy.release();
      }
    }
    Path data = dir.resolve("data.mdb");
    MetaPages m;
    try (FileChannel ch = FileChannel.open(data)) {
      m = MetaPages.read(ch, data, "t");
    }
    assertThat(m.current.lastPage()).isGreaterThan(20);
    if (m.fileSize < m.requiredSize()) {
      try (FileChannel ch = FileChannel.open(data)) {
        PageWalk.check(ch, data, "t", m.current, m.fileSize);
      }
    }
    try (Store s = Lmdb.open(dir)) {
      assertThat(s.get(b("k"))).isEqualTo(b("v"));
      s.verify();
    }
  }
}
