package io.kv4j.lmdb;

import io.kv4j.DamagedRegion;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreLockedException;
import io.kv4j.spi.DirectoryLock;
import io.kv4j.spi.SalvageSink;
import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * {@code salvage} of an LMDB store: every intact entry of a store that may be damaged, read from
 * {@code data.mdb} with plain file reads ({@link SalvageWalk}) and never through LMDB, which trusts
 * its pages and can crash the JVM on a damaged one.
 *
 * <p>Nothing in the store's directory is written or created: no {@code lock.mdb}, no {@code
 * kv4j.lock}, no identity. A kv4j writer in another process holds {@code kv4j.lock} (an OS lock);
 * salvage takes a shared lock on that file when it exists, so it refuses a store open for writing
 * with {@link StoreLockedException} and keeps a writer from opening it while it reads (a lock
 * changes no byte of the file). A store open in this JVM is refused too: it should be read through
 * the open store, and closing a channel on {@code kv4j.lock} here would drop this JVM's own lock on
 * it (POSIX locks belong to the process).
 *
 * <p>The snapshot read is the newest one whose meta page can be read (see {@link #choose}); every
 * damaged meta field is reported.
 */
final class Salvage {
  /** The layout with no required file: a store whose data file is gone is read as far as it can. */
  private static final StoreDirectory.Layout LAYOUT =
      new StoreDirectory.Layout(
          LmdbProvider.ID,
          LmdbStore.FORMAT_NAMED_FRAMED,
          n -> n.equals(LmdbStore.DATA_FILE) || n.equals(LmdbStore.LOCK_FILE),
          Set.of());

  private Salvage() {}

  /**
   * Salvages a store.
   *
   * @param config where the store is
   * @param sink receives every intact entry
   * @return every damaged region found
   * @throws StoreLockedException if the store is open for writing in another process, or open in
   *     this JVM
   * @throws StoreIOException if the directory or its data file is missing or cannot be read
   * @throws StoreCorruptedException if the directory holds another engine's store
   */
  static List<DamagedRegion> run(StoreConfig config, SalvageSink sink) {
    Objects.requireNonNull(sink, "sink");
    StoreConfig ro = config.toBuilder().readOnly(true).createIfMissing(false).build();
    List<DamagedRegion> damage = new ArrayList<>();
    Integer format;
    Path dir;
    try (StoreDirectory d = StoreDirectory.open(ro, LAYOUT)) {
      dir = d.path();
      format = d.format();
    } catch (StoreCorruptedException e) {
      dir = realPath(ro.path());
      Path id = dir.resolve(StoreDirectory.IDENTITY_FILE);
      if (!id.equals(e.file()) || !e.getMessage().contains(" is damaged (")) {
        throw e; // another engine's store, a newer format, or files that are not a store
      }
      damage.add(
          new DamagedRegion(
              id, -1, -1, null, 0, null, e.getMessage() + "; the format was told from the data"));
      format = null;
    }
    String where = "engine '" + LmdbProvider.ID + "' at " + dir;
    if (!LmdbOpening.claimForSalvage(dir)) {
      throw new StoreLockedException(
          where
              + ": the store is open in this JVM; read it through the open Store, or close it"
              + " before salvaging it",
          dir);
    }
    try {
      Fence fence = Fence.take(dir, where);
      try {
        Path data = dir.resolve(LmdbStore.DATA_FILE);
        if (!Files.isRegularFile(data)) {
          throw new StoreIOException(
              where + ": no LMDB data file " + data + ": nothing to salvage", (Throwable) null);
        }
        try (FileChannel ch = FileChannel.open(data, StandardOpenOption.READ)) {
          long size = ch.size();
          Choice choice = choose(ch, data, size, damage);
          if (choice != null) {
            Boolean framed =
                format == null || format == LmdbStore.FORMAT_RAW
                    ? null
                    : format == LmdbStore.FORMAT_FRAMED || format == LmdbStore.FORMAT_NAMED_FRAMED;
            Boolean named =
                format != null && format >= LmdbStore.FORMAT_NAMED_RAW ? Boolean.TRUE : null;
            SalvageWalk.Outcome o =
                SalvageWalk.run(ch, data, choice.pick(), size, framed, named, sink);
            damage.addAll(o.damage());
            if (o.rootLost() && o.entries() == 0 && choice.older() != null) {
              // Nothing of the newest snapshot can be reached; the one before it is intact in a
              // healthy file (LMDB reuses its pages only two commits later).
              MetaPages.Meta older = choice.older();
              damage.add(
                  new DamagedRegion(
                      data,
                      (long) choice.pick().slot() * choice.pick().pageSize() + MetaPages.MAIN_DB,
                      PageWalk.DB_RECORD,
                      null,
                      -1,
                      null,
                      "the newest snapshot's main database cannot be read from its root; read the"
                          + " older snapshot of meta page "
                          + older.slot()
                          + " (transaction "
                          + older.txnId()
                          + "): the last commit is lost and older versions of what it wrote may"
                          + " come back"));
              for (DamagedRegion d :
                  SalvageWalk.run(ch, data, older, size, framed, named, sink).damage()) {
                if (!damage.contains(d)) {
                  damage.add(d);
                }
              }
            }
          }
        } catch (IOException e) {
          throw new StoreIOException(where + ": cannot read " + data + ": " + e, e);
        }
      } finally {
        fence.close();
      }
    } finally {
      LmdbOpening.closed(dir);
    }
    return damage;
  }

  private static Path realPath(Path p) {
    try {
      return p.toRealPath();
    } catch (IOException e) {
      throw new StoreIOException("cannot resolve store directory " + p + ": " + e, e);
    }
  }

  /** A shared lock on {@code kv4j.lock}, held while salvage reads; empty where there is none. */
  private static final class Fence implements AutoCloseable {
    private final FileChannel ch;

    private Fence(FileChannel ch) {
      this.ch = ch;
    }

    static Fence take(Path dir, String where) {
      FileChannel ch;
      try {
        ch = FileChannel.open(dir.resolve(DirectoryLock.FILE_NAME), StandardOpenOption.READ);
      } catch (IOException e) {
        return new Fence(null); // no lock file (or unreadable): no kv4j writer can be told
      }
      boolean held = false;
      try {
        FileLock lock = ch.tryLock(0, Long.MAX_VALUE, true);
        if (lock == null) {
          throw new StoreLockedException(
              where
                  + ": the store is open for writing in another process; salvage reads only a store"
                  + " nothing writes (close the writer first)",
              dir);
        }
        held = true;
        return new Fence(ch);
      } catch (OverlappingFileLockException e) {
        throw new StoreLockedException(where + ": the store is open in this JVM", dir);
      } catch (IOException e) {
        return new Fence(null); // the file system has no locks: nothing can be told
      } finally {
        if (!held) {
          try {
            ch.close();
          } catch (IOException ignored) {
            // Closing a read-only channel loses nothing.
          }
        }
      }
    }

    @Override
    public void close() {
      if (ch != null) {
        try {
          ch.close(); // releases the lock
        } catch (IOException ignored) {
          // The lock dies with the descriptor.
        }
      }
    }
  }

  // ---- choosing the snapshot ----

  /**
   * One meta page, read without trusting it. {@code meta} is set when its snapshot can be read: its
   * page size is one LMDB uses, its main database's root lies within the file, and at most one of
   * its flags, magic number, version and page number is damaged (one flipped bit leaves the rest of
   * the page intact). {@code problem} lists what is damaged, or is null.
   */
  private record Candidate(int slot, long at, MetaPages.Meta meta, String problem, long txnField) {}

  /** The snapshot to read, and the older one to fall back on (null if it cannot be read). */
  record Choice(MetaPages.Meta pick, MetaPages.Meta older) {}

  /**
   * The snapshot to read, every damaged meta field reported:
   *
   * <ul>
   *   <li>both readable, their transaction ids fitting LMDB's alternation (meta page {@code t & 1}
   *       holds {@code t}, the other {@code t - 1}): the newer;
   *   <li>both readable, the ids not fitting (one is damaged): the one whose free-page list names
   *       the newer transaction (each commit records the pages it freed under its own id), then the
   *       one with more pages, then the higher id;
   *   <li>one readable: that one; if the other held the newer snapshot, its last commit is lost
   *       (older versions of what it wrote may come back), which the region says;
   *   <li>none: null.
   * </ul>
   *
   * <p>The last page in use is the larger of the two pages' (the file never shrinks, so a smaller
   * one in the newer page is damage), and never past the end of the file.
   */
  static Choice choose(FileChannel ch, Path data, long size, List<DamagedRegion> damage) {
    Candidate m0 = candidate(ch, 0, 0, size, 0);
    Candidate m1 = null;
    if (m0.meta() != null) {
      int p = m0.meta().pageSize();
      m1 = candidate(ch, 1, p, size, p);
    } else {
      // Meta page 0 cannot say the page size: look for meta page 1 at each possible one, then
      // read meta page 0 with the size meta page 1 records (both always record the same).
      for (int p = MetaPages.MIN_PAGE_SIZE; p <= MetaPages.MAX_PAGE_SIZE; p <<= 1) {
        Candidate c = candidate(ch, 1, p, size, 0);
        if (c.meta() != null && c.meta().pageSize() == p) {
          m1 = c;
          m0 = candidate(ch, 0, 0, size, p);
          break;
        }
      }
      if (m1 == null) {
        m1 = new Candidate(1, -1, null, "LMDB meta page 1 was not found", -1);
      }
    }
    if (m0.meta() == null && m1.meta() == null) {
      damage.add(
          region(
              data,
              m0,
              -1,
              m0.problem()
                  + "; "
                  + m1.problem()
                  + ": no snapshot can be found, every entry is lost"));
      return null;
    }
    if (m0.meta() == null || m1.meta() == null) {
      Candidate good = m0.meta() != null ? m0 : m1;
      Candidate bad = good == m0 ? m1 : m0;
      boolean older = bad.txnField() == good.meta().txnId() - 1 && fits(good.meta());
      damage.add(
          region(
              data,
              bad,
              older ? 0 : -1,
              bad.problem()
                  + (older
                      ? "; it held the older snapshot, so nothing is lost"
                      : "; read the snapshot of meta page "
                          + good.slot()
                          + " (transaction "
                          + good.meta().txnId()
                          + "): if the damaged page held a newer one, its last commit is lost"
                          + " and older versions of what it wrote may come back")));
      if (good.problem() != null) {
        damage.add(region(data, good, 0, good.problem() + "; its snapshot was read all the same"));
      }
      return new Choice(bounded(good.meta(), good.meta(), size), null);
    }
    MetaPages.Meta a = m0.meta();
    MetaPages.Meta b = m1.meta();
    boolean fresh = a.txnId() == 0 && b.txnId() == 0;
    MetaPages.Meta pick;
    if (a.pageSize() == b.pageSize()
        && (fresh || (fits(a) && fits(b) && Math.abs(a.txnId() - b.txnId()) == 1))) {
      pick = a.txnId() > b.txnId() ? a : b;
    } else {
      long fa = newestFreed(ch, a, size);
      long fb = newestFreed(ch, b, size);
      if (fa != fb) {
        pick = fa > fb ? a : b;
      } else if (a.lastPage() != b.lastPage()) {
        pick = a.lastPage() > b.lastPage() ? a : b;
      } else {
        pick = a.txnId() > b.txnId() ? a : b;
      }
      Candidate other = pick == a ? m1 : m0;
      damage.add(
          new DamagedRegion(
              data,
              other.at() + MetaPages.TXNID,
              8,
              null,
              -1,
              null,
              "the LMDB meta pages record transactions "
                  + a.txnId()
                  + " and "
                  + b.txnId()
                  + (a.pageSize() != b.pageSize()
                      ? " and page sizes " + a.pageSize() + " and " + b.pageSize()
                      : "")
                  + ", which LMDB never writes together: one is damaged; read the snapshot of"
                  + " meta page "
                  + pick.slot()
                  + ", whose free-page list is the newer (if it was the older, the last commit"
                  + " is lost and older versions of what it wrote may come back)"));
    }
    MetaPages.Meta other = pick == a ? b : a;
    for (Candidate c : new Candidate[] {m0, m1}) {
      if (c.problem() != null) {
        damage.add(
            region(
                data,
                c,
                0,
                c.problem()
                    + (c.meta() == pick
                        ? "; its snapshot, the newer, was read all the same"
                        : "; it holds the older snapshot, which was not read")));
      }
    }
    if (pick.lastPage() < other.lastPage() && pick.pageSize() == other.pageSize()) {
      damage.add(
          new DamagedRegion(
              data,
              (long) pick.slot() * pick.pageSize() + MetaPages.LAST_PG,
              8,
              null,
              0,
              null,
              "the newer LMDB meta page records last page "
                  + pick.lastPage()
                  + ", below the older one's "
                  + other.lastPage()
                  + " (the file never shrinks): the field is damaged; read up to page "
                  + other.lastPage()));
    }
    MetaPages.Meta common = pick.pageSize() == other.pageSize() ? other : pick;
    return new Choice(
        bounded(pick, common, size),
        other.pageSize() == pick.pageSize() ? bounded(other, pick, size) : null);
  }

  /** The snapshot of {@code m} with its last page at least {@code other}'s, within the file. */
  private static MetaPages.Meta bounded(MetaPages.Meta m, MetaPages.Meta other, long size) {
    long last = Math.max(m.lastPage(), other.lastPage());
    last = Math.max(1, Math.min(last, size / m.pageSize() - 1));
    return new MetaPages.Meta(m.slot(), m.pageSize(), last, m.txnId(), m.free(), m.main());
  }

  private static boolean fits(MetaPages.Meta m) {
    return m.txnId() == 0 || (m.txnId() & 1) == m.slot();
  }

  private static DamagedRegion region(Path data, Candidate c, long lost, String problem) {
    return new DamagedRegion(
        data,
        Math.max(c.at(), -1),
        c.at() < 0 ? -1 : MetaPages.META_BYTES,
        null,
        lost,
        null,
        problem);
  }

  /**
   * Reads one meta page at {@code at} and checks what concerns it alone (see {@link Candidate});
   * {@code known}: the page size the other meta page records (0 if none), which stands in for a
   * damaged one.
   */
  private static Candidate candidate(FileChannel ch, int slot, long at, long size, int known) {
    String what = "LMDB meta page " + slot + " at offset " + at;
    if (at + MetaPages.META_BYTES > size) {
      return new Candidate(slot, at, null, what + " lies past the end of the file", -1);
    }
    ByteBuffer b = ByteBuffer.allocate(MetaPages.META_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    try {
      while (b.hasRemaining() && ch.read(b, at + b.position()) >= 0) {
        // read on
      }
    } catch (IOException e) {
      throw new StoreIOException("cannot read " + what + ": " + e, e);
    }
    if (b.hasRemaining()) {
      return new Candidate(slot, at, null, what + " is cut short", -1);
    }
    long txn = b.getLong(MetaPages.TXNID);
    int pageSize = b.getInt(MetaPages.FREE_DB);
    long lastPage = b.getLong(MetaPages.LAST_PG);
    MetaPages.Db free = MetaPages.db(b, MetaPages.FREE_DB);
    MetaPages.Db main = MetaPages.db(b, MetaPages.MAIN_DB);
    List<String> damaged = new ArrayList<>();
    int header = 0;
    if ((b.getShort(10) & MetaPages.P_META) == 0) {
      damaged.add("its page flags");
      header++;
    }
    if (b.getInt(16) != MetaPages.MAGIC) {
      damaged.add("its magic number");
      header++;
    }
    if (b.getInt(20) != MetaPages.VERSION) {
      damaged.add("its format version (" + b.getInt(20) + ")");
      header++;
    }
    if (b.getLong(0) != slot) {
      damaged.add("its page number (" + b.getLong(0) + ")");
      header++;
    }
    boolean sizeOk =
        pageSize >= MetaPages.MIN_PAGE_SIZE
            && pageSize <= MetaPages.MAX_PAGE_SIZE
            && Integer.bitCount(pageSize) == 1;
    if (!sizeOk || (known > 0 && pageSize != known)) {
      damaged.add("its page size (" + pageSize + ")");
      if (known > 0) {
        pageSize = known;
        sizeOk = true;
      }
    }
    long inFile = sizeOk ? size / pageSize - 1 : -1;
    if (lastPage < 1 || lastPage > Long.MAX_VALUE / MetaPages.MAX_PAGE_SIZE) {
      damaged.add("its last page (" + lastPage + ")");
      lastPage = inFile;
    }
    boolean mainOk = main.isEmpty() || (main.root() >= 2 && main.root() <= inFile);
    if (!mainOk) {
      damaged.add("its main database's root page (" + main.root() + ")");
    }
    if (!free.isEmpty() && (free.root() < 2 || free.root() > inFile)) {
      damaged.add("its free-page list's root page (" + free.root() + ")");
    }
    String problem = damaged.isEmpty() ? null : what + " is damaged: " + String.join(", ", damaged);
    if (!sizeOk || !mainOk || header > 1 || lastPage < 1) {
      return new Candidate(slot, at, null, problem, txn);
    }
    return new Candidate(
        slot, at, new MetaPages.Meta(slot, pageSize, lastPage, txn, free, main), problem, txn);
  }

  /**
   * The newest transaction id in a snapshot's free-page list (its last key, on the rightmost path
   * from the root), 0 when the list is empty, -1 when it cannot be read.
   */
  private static long newestFreed(FileChannel ch, MetaPages.Meta m, long size) {
    long pg = m.free().root();
    if (m.free().isEmpty()) {
      return 0;
    }
    int psize = m.pageSize();
    for (int depth = 0; depth < PageWalk.MAX_DEPTH; depth++) {
      if (pg < 2 || pg > m.lastPage() || (pg + 1) * psize > size) {
        return -1;
      }
      ByteBuffer p = ByteBuffer.allocate(psize).order(ByteOrder.LITTLE_ENDIAN);
      try {
        while (p.hasRemaining() && ch.read(p, pg * psize + p.position()) >= 0) {
          // read on
        }
      } catch (IOException e) {
        return -1;
      }
      int type = p.getShort(10) & PageWalk.TYPE_MASK;
      int lower = p.getShort(12) & 0xFFFF;
      int n = (lower - MetaPages.HEADER) >> 1;
      if (p.getLong(0) != pg || n < 1 || lower > psize) {
        return -1;
      }
      int at = p.getShort(MetaPages.HEADER + 2 * (n - 1)) & 0xFFFF;
      if (at + PageWalk.NODE_HEADER + 8 > psize) {
        return -1;
      }
      if (type == PageWalk.P_BRANCH) {
        pg =
            (p.getShort(at) & 0xFFFFL)
                | (p.getShort(at + 2) & 0xFFFFL) << 16
                | (p.getShort(at + 4) & 0xFFFFL) << 32;
      } else if (type == PageWalk.P_LEAF && (p.getShort(at + 6) & 0xFFFF) == 8) {
        return p.getLong(at + PageWalk.NODE_HEADER);
      } else {
        return -1;
      }
    }
    return -1;
  }
}
