package io.kv4j.lmdb;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreLockedException;
import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.lmdbjava.Cursor;
import org.lmdbjava.Dbi;
import org.lmdbjava.DbiFlags;
import org.lmdbjava.Env;
import org.lmdbjava.EnvFlags;
import org.lmdbjava.Txn;

/**
 * Opening a store: the directory and its identity, the data file's checks before LMDB maps it, the
 * environment, its database and the store's format.
 */
final class LmdbOpening {
  static {
    JffiSettings.apply(); // before anything here loads lmdbjava and with it jffi
  }

  /**
   * Store directories whose LMDB environment is open in this JVM. LMDB forbids opening one
   * environment twice in a process: its reader-table locks are per process (fcntl), so closing the
   * second environment would drop the first one's locks.
   */
  private static final Set<Path> OPEN_HERE = ConcurrentHashMap.newKeySet();

  /** Entries sampled by {@link #looksFramed}. */
  private static final int FRAME_SAMPLE = 8;

  private final StoreConfig config;
  private final boolean readOnly;
  private StoreDirectory dir;
  private Path directory;
  private String where;
  private Path data;
  private Env<byte[]> env;
  private Path claimed;

  private LmdbOpening(StoreConfig config) {
    this.config = config;
    this.readOnly = config.readOnly();
  }

  static LmdbStore open(StoreConfig config) {
    return new LmdbOpening(config).run();
  }

  /**
   * Claims a directory for a salvage, which reads it without LMDB: false if it is open in this JVM.
   * While claimed, opens in this JVM fail as they do beside an open store. Release with {@link
   * #closed}.
   */
  static boolean claimForSalvage(Path directory) {
    return OPEN_HERE.add(directory);
  }

  /** Forgets a directory opened here, once its environment is closed. */
  static void closed(Path directory) {
    OPEN_HERE.remove(directory);
  }

  private LmdbStore run() {
    boolean explicit = config.options().containsKey(LmdbProvider.CHECKSUMS.name());
    boolean wanted = config.get(LmdbProvider.CHECKSUMS);
    boolean ok = false;
    try {
      dir = StoreDirectory.open(config, LmdbStore.layout(LmdbStore.FORMAT_NAMED_FRAMED));
      if (dir.isNew() && !wanted) {
        // A new store without checksums records format 3; the layout fixes the format written.
        dir.close();
        dir = null;
        dir = StoreDirectory.open(config, LmdbStore.layout(LmdbStore.FORMAT_NAMED_RAW));
      }
      directory = dir.path();
      where = "engine '" + LmdbProvider.ID + "' at " + directory;
      data = directory.resolve(LmdbStore.DATA_FILE);
      int pageSize = checkExisting();
      claim();
      boolean noLock = openEnv();
      boolean named = dir.format() >= LmdbStore.FORMAT_NAMED_RAW || holdsNamedDbs();
      Dbi<byte[]> main = openDb(noLock, named);
      Dbi<byte[]> db = named ? ownDb() : main;
      if (pageSize == 0) {
        pageSize = env.stat().pageSize;
      }
      MapBounds bounds = new MapBounds(data);
      bounds.mapped(env.info().mapSize);
      boolean framed =
          dir.format() == LmdbStore.FORMAT_FRAMED || dir.format() == LmdbStore.FORMAT_NAMED_FRAMED;
      if (!framed && dir.format() < LmdbStore.FORMAT_NAMED_RAW && looksFramed(env, db, bounds)) {
        // A framed store whose identity file was lost (then adopted as format 1): read it framed,
        // or every value would come back with its checksum in front.
        framed = true;
      }
      if (explicit && wanted != framed) {
        throw conflict(wanted, framed);
      }
      if (!readOnly) {
        // An adopted store's identity, once LMDB has opened and kv4j checked its files.
        dir.created(format(named, framed));
      }
      LmdbStore store =
          new LmdbStore(
              info(named, framed),
              dir,
              env,
              db,
              named ? main : null,
              config,
              framed,
              pageSize,
              noLock,
              bounds);
      ok = true;
      return store;
    } finally {
      if (!ok) {
        abandon();
      }
    }
  }

  /** Checks an existing data file; returns its page size, or 0 when there is none yet. */
  private int checkExisting() {
    boolean exists = Files.exists(data);
    if (readOnly && !exists) {
      throw new StoreIOException(
          where + ": no LMDB data file " + data + " to open read-only", (Throwable) null);
    }
    if (!exists) {
      return 0;
    }
    // Read-write opens hold the directory lock, so nothing writes the file during the walk.
    long walkLimit = readOnly ? -1 : config.get(LmdbProvider.OPEN_CHECK_LIMIT);
    return checkDataFile(data, where, walkLimit).pageSize();
  }

  private void claim() {
    if (!OPEN_HERE.add(directory)) {
      throw new StoreLockedException(
          where
              + ": the store is already open in this JVM (LMDB allows one environment per file"
              + " and process; share the open Store instead of opening it again)",
          directory);
    }
    claimed = directory;
  }

  /** Opens the environment; returns whether it runs without the reader table (MDB_NOLOCK). */
  private boolean openEnv() {
    List<EnvFlags> flags = new ArrayList<>();
    flags.add(EnvFlags.MDB_NOTLS);
    if (config.durability() == Durability.BUFFERED) {
      flags.add(EnvFlags.MDB_NOSYNC);
    }
    boolean noLock = false;
    if (readOnly) {
      flags.add(EnvFlags.MDB_RDONLY_ENV);
      // LMDB would create lock.mdb (a read-only open creates nothing) or fail to open it for
      // writing (read-only media, unwritable directory): then read without the reader table.
      noLock = !Files.isWritable(directory.resolve(LmdbStore.LOCK_FILE));
      if (noLock) {
        flags.add(EnvFlags.MDB_NOLOCK);
      }
    }
    try {
      env =
          Env.create(ArrayProxy.INSTANCE)
              .setMapSize(roundUp(config.get(LmdbProvider.MAP_SIZE)))
              .setMaxReaders(config.get(LmdbProvider.MAX_READERS))
              .setMaxDbs(Keyspaces.MAX_DBS)
              .open(directory.toFile(), 0644, flags.toArray(new EnvFlags[0]));
    } catch (LinkageError e) {
      throw Errors.initFailure(where, e);
    } catch (RuntimeException e) {
      if (e instanceof java.lang.reflect.InaccessibleObjectException) {
        throw Errors.initFailure(where, e);
      }
      throw Errors.translate(where, data, e);
    }
    int nativeMax = env.getMaxKeySize();
    if (nativeMax < LmdbProvider.MAX_KEY_SIZE) {
      throw new IllegalStateException(
          where
              + ": the LMDB native library accepts keys up to "
              + nativeMax
              + " bytes, fewer than the "
              + LmdbProvider.MAX_KEY_SIZE
              + " this engine declares");
    }
    return noLock;
  }

  /**
   * Opens the unnamed database (in formats 3 and 4 it holds only the names of the named databases);
   * a new store's creation, with the database of its own keys in formats 3 and 4, is made durable
   * before its identity.
   */
  private Dbi<byte[]> openDb(boolean noLock, boolean named) {
    Dbi<byte[]> db;
    try {
      if (!readOnly && !noLock) {
        env.readerCheck(); // frees slots left by dead processes
      }
      db = readOnly ? env.openDbi((byte[]) null) : env.openDbi((byte[]) null, DbiFlags.MDB_CREATE);
      if (named && !readOnly) {
        env.openDbi(Keyspaces.OWN, DbiFlags.MDB_CREATE); // its handle is opened again by ownDb()
      }
      if (dir.isNew()) {
        env.sync(true); // the meta pages LMDB wrote at creation, durable before the identity
      }
    } catch (RuntimeException e) {
      throw Errors.translate(where, data, e);
    }
    if (dir.isNew()) {
      dir.created();
    }
    return db;
  }

  /**
   * Whether a store of format 1 or 2 holds named databases after all: a store of format 3 or 4
   * whose identity file was lost is adopted as format 1, and read as such it would return the names
   * of its databases as keys. Its main database then holds the database {@value Keyspaces#OWN}; in
   * a store of format 1 or 2 a key of that name is a plain record (LMDB refuses to open it as a
   * database) or absent.
   */
  private boolean holdsNamedDbs() {
    if (dir.isNew()) {
      return false;
    }
    try (Txn<byte[]> txn = env.txnRead()) {
      env.openDbi(
          txn, Keyspaces.OWN.getBytes(java.nio.charset.StandardCharsets.US_ASCII), null, false);
      return true; // the handle closes with the transaction, which is never committed
    } catch (Dbi.KeyNotFoundException | Dbi.IncompatibleException e) {
      return false;
    } catch (RuntimeException e) {
      throw Errors.translate(where, data, e);
    }
  }

  /** The named database of the store's own keys (formats 3 and 4). */
  private Dbi<byte[]> ownDb() {
    try {
      return env.openDbi(Keyspaces.OWN);
    } catch (RuntimeException e) {
      throw new StoreCorruptedException(
          where
              + ": "
              + data
              + " has no database '"
              + Keyspaces.OWN
              + "' holding the store's keys, which its format "
              + dir.format()
              + " requires ("
              + e
              + ")",
          data,
          -1,
          e);
    }
  }

  static int format(boolean named, boolean framed) {
    if (named) {
      return framed ? LmdbStore.FORMAT_NAMED_FRAMED : LmdbStore.FORMAT_NAMED_RAW;
    }
    return framed ? LmdbStore.FORMAT_FRAMED : LmdbStore.FORMAT_RAW;
  }

  private IllegalArgumentException conflict(boolean wanted, boolean framed) {
    return new IllegalArgumentException(
        where
            + ": option checksums="
            + wanted
            + " conflicts with the store, which has format "
            + dir.format()
            + (framed
                ? " (every value carries a checksum)"
                : " (values stored raw, without checksums)")
            + "; the store's format cannot change in place: omit the option, or copy the"
            + " store to a new one with: kv4j copy --from lmdb:"
            + directory
            + " --to lmdb:<new directory>?checksums="
            + wanted);
  }

  private StoreInfo info(boolean named, boolean framed) {
    Set<Feature> features = EnumSet.copyOf(LmdbProvider.FEATURES);
    if (!named) {
      // Formats 1 and 2 keep the store's keys in the main database, where LMDB also stores the
      // names of named databases: keyspaces there would collide with keys. Copy the store with
      // kv4j copy to a new one (format 3 or 4) to gain them.
      features.remove(Feature.KEYSPACES);
      features.remove(Feature.KEYSPACE_BATCH);
    }
    if (!framed) {
      features.remove(Feature.CHECKSUMS);
    }
    return new StoreInfo(
        LmdbProvider.ID,
        features,
        LmdbProvider.LIMITS,
        config.durability(),
        directory.toString(),
        readOnly);
  }

  /** After a failed open: closes what was opened and releases the claims. Never throws. */
  private void abandon() {
    try {
      if (env != null) {
        env.close();
      }
    } catch (RuntimeException ignored) {
      // Closing is best effort after a failed open.
    } finally {
      if (claimed != null) {
        OPEN_HERE.remove(claimed);
      }
      if (dir != null) {
        dir.close();
      }
    }
  }

  /**
   * Whether the first entries of a store opened as format 1 (raw values) all carry valid frames:
   * the sign of a framed store whose identity file was lost. A raw value passes by chance with
   * probability 2^-32 (its first 4 bytes would have to equal the CRC32C of its key and the rest),
   * so up to {@value #FRAME_SAMPLE} passing entries and no failing one settle it.
   */
  private static boolean looksFramed(Env<byte[]> env, Dbi<byte[]> db, MapBounds bounds) {
    int passed = 0;
    try (Txn<byte[]> txn = env.txnRead();
        Cursor<byte[]> c = db.openCursor(txn)) {
      ArrayProxy.beginCursor(bounds, false);
      for (boolean found = c.first(); found && passed < FRAME_SAMPLE; found = c.next()) {
        byte[] v = c.val();
        if (v.length < ValueFrame.HEADER) {
          return false;
        }
        int recorded =
            (v[0] & 0xFF) | (v[1] & 0xFF) << 8 | (v[2] & 0xFF) << 16 | (v[3] & 0xFF) << 24;
        if (recorded != ValueFrame.checksum(c.key(), Arrays.copyOfRange(v, 4, v.length))) {
          return false;
        }
        passed++;
      }
    } finally {
      ArrayProxy.release();
    }
    return passed > 0;
  }

  /**
   * Checks an existing data file before LMDB maps it: both meta pages, and that the file holds
   * every page the current meta says is in use (LMDB maps the file and would crash the JVM with
   * SIGBUS on touching a page past its end). A file shorter than that is walked page by page: LMDB
   * leaves pages that a transaction allocated and freed again unwritten, so a healthy file may end
   * before its last, free, pages; a truncated one has pages in use past its end.
   *
   * <p>Another process may be committing meanwhile (a read-only open beside a writer): {@link
   * MetaPages#read} tolerates that in the meta pages, and a walk that fails counts as damage only
   * if the file still reads as before it (same meta pages, same length): no commit ended during the
   * walk, so the one that may have been running wrote only pages free in the walked snapshot and
   * the one before it (LMDB reuses a page only two commits after the one that freed it, when no
   * reader holds an older snapshot). Otherwise the check starts again from the newer meta pages.
   */
  static MetaPages checkDataFile(Path data, String where, long walkLimit) {
    try (FileChannel ch = FileChannel.open(data, StandardOpenOption.READ)) {
      return checkDataFile(ch, data, where, walkLimit);
    } catch (IOException e) {
      throw new StoreIOException(where + ": cannot read " + data + ": " + e, e);
    }
  }

  /** {@link #checkDataFile(Path, String, long)} on an open channel. */
  static MetaPages checkDataFile(FileChannel ch, Path data, String where, long walkLimit) {
    for (int attempt = 1; ; attempt++) {
      MetaPages m = MetaPages.read(ch, data, where);
      boolean shortFile = m.fileSize < m.requiredSize();
      if (!shortFile && m.requiredSize() > walkLimit) {
        return m;
      }
      try {
        // LMDB follows damaged pages without checks, and some damage (a leaf node flagged as
        // holding duplicates, in a database without them) makes it dereference a null pointer.
        PageWalk.check(ch, data, where, m.current, m.fileSize);
        return m;
      } catch (StoreCorruptedException e) {
        if (m.unchanged(ch, data, where)) {
          throw shortFile ? truncated(data, where, m, e) : e;
        }
        if (attempt >= MetaPages.MAX_LOOKS) {
          throw new StoreException(
              where
                  + ": "
                  + data
                  + " changed under each of "
                  + attempt
                  + " walks of its pages; the last walk: "
                  + e.getMessage(),
              e);
        }
      }
    }
  }

  private static StoreCorruptedException truncated(
      Path data, String where, MetaPages m, StoreCorruptedException e) {
    return new StoreCorruptedException(
        where
            + ": "
            + data
            + " is "
            + m.fileSize
            + " bytes, but its meta page (transaction "
            + m.current.txnId()
            + ") records pages 0.."
            + m.current.lastPage()
            + " of "
            + m.pageSize()
            + " bytes, "
            + m.requiredSize()
            + " bytes: the file was truncated or damaged ("
            + e.getMessage()
            + ")",
        data,
        m.fileSize,
        e);
  }

  static long roundUp(long bytes) {
    long unit = 1L << 16; // a multiple of every OS page size LMDB runs on
    return (bytes + unit - 1) / unit * unit;
  }
}
