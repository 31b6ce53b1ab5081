package io.kv4j.lmdb;

import static io.kv4j.lmdb.Lmdb.b;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Store;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntFunction;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lmdbjava.Dbi;
import org.lmdbjava.DbiFlags;
import org.lmdbjava.Env;
import org.lmdbjava.EnvFlags;
import org.lmdbjava.Txn;

/**
 * The checks made before LMDB maps the file, against a file that a writer changes under them
 * ({@link ScriptedFile}): what a live writer can show a reader is never damage, and a file that
 * never reads consistent is not called damaged either.
 */
class LmdbOpenCheckRaceTest {
  @TempDir Path dir;

  private byte[] base;
  private int pageSize;

  @BeforeEach
  void healthyFile() throws IOException {
    try (Store s = Lmdb.open(dir)) {
      for (int i = 0; i < 200; i++) {
        s.put(b("key" + i), new byte[100]);
      }
    }
    base = Files.readAllBytes(dir.resolve("data.mdb"));
    pageSize = ByteBuffer.wrap(base).order(ByteOrder.LITTLE_ENDIAN).getInt(MetaPages.FREE_DB);
  }

  /**
   * The file as a commit of transaction {@code txn} leaves it: its meta page and the one before.
   */
  private byte[] committed(long txn) {
    return committed(base, txn);
  }

  private byte[] committed(byte[] file, long txn) {
    byte[] f = file.clone();
    ByteBuffer w = ByteBuffer.wrap(f).order(ByteOrder.LITTLE_ENDIAN);
    w.putLong((int) (txn & 1) * pageSize + MetaPages.TXNID, txn);
    w.putLong((int) ((txn - 1) & 1) * pageSize + MetaPages.TXNID, txn - 1);
    return f;
  }

  @Test
  void metaPagesOfCommitsAFewApart_areNoDamage() {
    // Three commits between any two system calls: page 0 and page 1, read one after the other,
    // come from transactions at least two apart.
    ScriptedFile f = new ScriptedFile(tick -> committed(1000 + 3L * tick));

    MetaPages m = MetaPages.read(f, dir.resolve("data.mdb"), "t");

    assertThat(Math.abs(m.current.txnId() - m.other.txnId())).isEqualTo(1);
  }

  @Test
  void metaPageReadHalfWritten_isNoDamageOnceItSettles() {
    // Meta page 0 caught mid-write, twice, each time differently: the new main root (past the old
    // last page) already there, mm_last_pg and the transaction id not yet.
    List<byte[]> states = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      byte[] torn = committed(1000);
      long lastPage =
          ByteBuffer.wrap(torn).order(ByteOrder.LITTLE_ENDIAN).getLong(MetaPages.LAST_PG);
      ByteBuffer.wrap(torn)
          .order(ByteOrder.LITTLE_ENDIAN)
          .putLong(MetaPages.MAIN_DB + 40, lastPage + 1 + i);
      states.add(torn);
    }
    ScriptedFile f =
        new ScriptedFile(tick -> tick < states.size() ? states.get(tick) : committed(1001));

    MetaPages m = MetaPages.read(f, dir.resolve("data.mdb"), "t");

    assertThat(m.current.txnId()).isEqualTo(1001);
  }

  @Test
  void metaPagesThatChangeUnderEveryReadAndNeverAgree_failWithoutClaimingDamage() {
    // Never consecutive, never the same twice.
    ScriptedFile f =
        new ScriptedFile(
            tick -> {
              byte[] s = committed(1000 + 2L * tick);
              ByteBuffer.wrap(s).order(ByteOrder.LITTLE_ENDIAN).putLong(MetaPages.TXNID, 2L * tick);
              return s;
            });

    assertThatThrownBy(() -> MetaPages.read(f, dir.resolve("data.mdb"), "t"))
        .isInstanceOf(StoreException.class)
        .isNotInstanceOf(StoreCorruptedException.class)
        .hasMessageContaining("changed under each of " + MetaPages.MAX_LOOKS)
        .hasMessageContaining("not consecutive");
  }

  /**
   * LMDB leaves pages that a transaction allocated and freed again unwritten, so a healthy file can
   * end before its last pages, and the open walks it. The walked snapshot is pinned by no reader,
   * so a writer three commits on may have reused one of its pages: the walk fails, but the meta
   * pages have moved, and the newer snapshot is checked instead.
   */
  @Test
  void walkOfAShortFileWhosePagesAWriterReused_isNoDamage() throws IOException {
    byte[] shortFile = fileEndingBeforeItsLastPages(dir.resolve("raw"));
    MetaPages t = LmdbOpening.checkDataFile(new ScriptedFile(tick -> shortFile), dir, "t", -1);
    assertThat(t.fileSize).as("the file ends before its last pages").isLessThan(t.requiredSize());
    long txn = t.current.txnId();
    byte[] reused = committed(shortFile, txn + 3);
    int root = (int) t.current.main().root();
    Arrays.fill(reused, root * t.pageSize(), (root + 1) * t.pageSize(), (byte) 0);
    byte[] later = committed(shortFile, txn + 3);
    // The file holds the snapshot the first look saw; after that look, the reused page; after the
    // next look, the newer snapshot.
    ScriptedFile f =
        new ScriptedFile(tick -> tick == 0 ? shortFile : tick == 1 ? reused : later, false);

    MetaPages m = LmdbOpening.checkDataFile(f, dir.resolve("data.mdb"), "t", -1);

    assertThat(m.current.txnId()).isEqualTo(txn + 3);
  }

  /**
   * A healthy data file that ends before its last pages, which are free, as when LMDB never wrote
   * them: a large value put and deleted leaves many free pages, and later commits reuse the low
   * ones and free the high ones; the file is then cut after its last page in use.
   */
  private static byte[] fileEndingBeforeItsLastPages(Path raw) throws IOException {
    Files.createDirectories(raw);
    try (Env<byte[]> env =
        Env.create(ArrayProxy.INSTANCE)
            .setMapSize(64 << 20)
            .setMaxDbs(1)
            .open(raw.toFile(), EnvFlags.MDB_NOTLS)) {
      Dbi<byte[]> db = env.openDbi((byte[]) null, DbiFlags.MDB_CREATE);
      for (int i = 0; i < 6; i++) {
        try (Txn<byte[]> txn = env.txnWrite()) {
          db.put(txn, b("big"), new byte[i == 0 ? 1 << 20 : 0]);
          db.put(txn, b("k" + i), b("v"));
          txn.commit();
        } finally {
          ArrayProxy.release();
        }
      }
    }
    byte[] whole = Files.readAllBytes(raw.resolve("data.mdb"));
    MetaPages m = MetaPages.read(new ScriptedFile(tick -> whole), raw, "t");
    for (long pages = m.current.lastPage(); pages > 2; pages--) {
      byte[] cut = Arrays.copyOf(whole, (int) (pages * m.pageSize()));
      try {
        PageWalk.check(new ScriptedFile(tick -> cut), raw, "t", m.current, cut.length);
      } catch (StoreCorruptedException e) {
        assertThat(pages).as("pages in use before the last ones").isLessThan(m.current.lastPage());
        return Arrays.copyOf(whole, (int) ((pages + 1) * m.pageSize()));
      }
    }
    throw new AssertionError("no page in use past page 2");
  }

  /**
   * A read-only data file whose content a writer changes between system calls of the reader: state
   * {@code n} is what the file holds after the writer's {@code n}-th step.
   */
  private static final class ScriptedFile extends FileChannel {
    private final IntFunction<byte[]> states;
    private final boolean everyCall;
    private int tick;

    /** A file that moves to its next state after every read and every size query. */
    ScriptedFile(IntFunction<byte[]> states) {
      this(states, true);
    }

    /**
     * A file that moves to its next state after every read and size query ({@code everyCall}), or
     * after every size query only.
     */
    ScriptedFile(IntFunction<byte[]> states, boolean everyCall) {
      this.states = states;
      this.everyCall = everyCall;
    }

    @Override
    public int read(ByteBuffer dst, long position) {
      byte[] now = states.apply(everyCall ? tick++ : tick);
      if (position >= now.length) {
        return -1;
      }
      int n = (int) Math.min(dst.remaining(), now.length - position);
      dst.put(now, (int) position, n);
      return n;
    }

    @Override
    public long size() {
      return states.apply(tick++).length;
    }

    @Override
    public int read(ByteBuffer dst) {
      throw new UnsupportedOperationException();
    }

    @Override
    public long read(ByteBuffer[] dsts, int offset, int length) {
      throw new UnsupportedOperationException();
    }

    @Override
    public int write(ByteBuffer src) {
      throw new UnsupportedOperationException();
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) {
      throw new UnsupportedOperationException();
    }

    @Override
    public int write(ByteBuffer src, long position) {
      throw new UnsupportedOperationException();
    }

    @Override
    public long position() {
      throw new UnsupportedOperationException();
    }

    @Override
    public FileChannel position(long newPosition) {
      throw new UnsupportedOperationException();
    }

    @Override
    public FileChannel truncate(long size) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void force(boolean metaData) {
      throw new UnsupportedOperationException();
    }

    @Override
    public long transferTo(long position, long count, WritableByteChannel target) {
      throw new UnsupportedOperationException();
    }

    @Override
    public long transferFrom(ReadableByteChannel src, long position, long count) {
      throw new UnsupportedOperationException();
    }

    @Override
    public MappedByteBuffer map(MapMode mode, long position, long size) {
      throw new UnsupportedOperationException();
    }

    @Override
    public FileLock lock(long position, long size, boolean shared) {
      throw new UnsupportedOperationException();
    }

    @Override
    public FileLock tryLock(long position, long size, boolean shared) {
      throw new UnsupportedOperationException();
    }

    @Override
    protected void implCloseChannel() {}
  }
}
