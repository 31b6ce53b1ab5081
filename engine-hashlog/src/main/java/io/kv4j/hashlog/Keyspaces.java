package io.kv4j.hashlog;

import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * The named keyspaces of a store: each is a complete hashlog sub-store (own segments, hints,
 * manifest, index and compaction) in {@code keyspaces/<name>/} inside the store's directory.
 *
 * <ul>
 *   <li><b>Create</b>: {@code mkdir keyspaces/<name>} and an fsync of {@code keyspaces/} (and of
 *       the store's directory when {@code keyspaces/} itself was new), then the sub-store is opened
 *       there, which creates its files crash-safely (an empty or identity-less directory left by a
 *       crash opens as a new or adopted store).
 *   <li><b>Drop</b>: the sub-store is closed (calls still in flight end with {@code
 *       StoreClosedException}), its directory renamed to {@code keyspaces/.drop-<name>} and {@code
 *       keyspaces/} fsynced: that rename is the drop. Then the directory is deleted. A crash after
 *       the rename leaves {@code .drop-<name>}, which the next read-write open deletes; a crash
 *       before it leaves the keyspace whole.
 *   <li><b>Open</b>: sub-stores are opened on first use (a handle, a backup, {@code verify}, {@code
 *       compact}) and stay open until the store closes or drops them. The store's own directory
 *       lock covers them: a keyspace's sub-store holds its own directory's lock only while it
 *       opens, so an open keyspace costs one descriptor (its active segment's), not two; a keyspace
 *       directory opened as a store of its own is refused ({@link #refuseKeyspaceDirectory}), and a
 *       read-only store opens a keyspace only while no writer holds the store's lock.
 * </ul>
 *
 * <p>Anything else in {@code keyspaces/} (a file, a directory with an invalid name) fails the open
 * with {@link StoreCorruptedException}. Thread-safe: every method holds this object's lock.
 */
final class Keyspaces {
  static final String DIR_NAME = "keyspaces";

  /** The prefix of a dropped keyspace's directory until its deletion finishes. */
  static final String DROPPING = ".drop-";

  /** Opens (read-write: creates if empty) the sub-store of keyspace {@code name} in {@code dir}. */
  interface Opener {
    HashLogStore open(String name, Path dir);
  }

  private final Path storeDir;
  private final Path dir;
  private final boolean readOnly;
  private final Opener opener;
  private final Storage storage;
  private final Map<String, HashLogStore> open = new TreeMap<>();
  private boolean closed;

  Keyspaces(Path storeDir, boolean readOnly, Storage storage, Opener opener) {
    this.storeDir = storeDir;
    this.storage = storage;
    this.dir = storeDir.resolve(DIR_NAME);
    this.readOnly = readOnly;
    this.opener = opener;
  }

  /**
   * Refuses a directory that is a keyspace of a hashlog store ({@code <store>/keyspaces/<name>}):
   * opened on its own it would escape the store's lock (the only lock covering an open keyspace),
   * and a drop or the store's writes could happen under it. Told by the place, not by a lock, so it
   * holds whether or not the store is open, in this process or another.
   */
  static void refuseKeyspaceDirectory(Path given) {
    Path real;
    try {
      if (given == null) {
        return;
      }
      real = given.toRealPath();
    } catch (IOException e) {
      return; // missing (a new store) or unreadable: the directory's own checks say why
    }
    Path parent = real.getParent();
    if (parent == null || parent.getFileName() == null) {
      return;
    }
    Path store = parent.getParent();
    if (parent.getFileName().toString().equals(DIR_NAME)
        && store != null
        && Files.exists(store.resolve(Manifest.FILE_NAME))) {
      throw new IllegalArgumentException(
          "engine 'hashlog': "
              + real
              + " is keyspace '"
              + real.getFileName()
              + "' of the store at "
              + store
              + "; open that store and call keyspace(\""
              + real.getFileName()
              + "\") (a keyspace is opened only through its store, under its lock)");
    }
  }

  /** Checks {@code keyspaces/} at open; a read-write open deletes the leftovers of drops. */
  synchronized void check() throws IOException {
    if (!Files.isDirectory(dir)) {
      if (Files.exists(dir)) {
        throw new StoreCorruptedException(
            "engine 'hashlog' at " + storeDir + ": " + dir + " is not a directory", dir, -1);
      }
      return;
    }
    for (Path p : entries()) {
      String n = p.getFileName().toString();
      if (n.startsWith(DROPPING) && validName(n.substring(DROPPING.length()))) {
        if (!readOnly) {
          deleteTree(p);
          storage.forceDirectory(dir);
        }
      } else if (!validName(n) || !Files.isDirectory(p)) {
        throw new StoreCorruptedException(
            "engine 'hashlog' at "
                + storeDir
                + ": "
                + p
                + " is not a keyspace (keyspaces/ holds only directories named as keyspaces)",
            p,
            -1);
      }
    }
  }

  /** The keyspaces on disk. */
  synchronized List<String> names() {
    List<String> out = new ArrayList<>();
    if (!Files.isDirectory(dir)) {
      return out;
    }
    try {
      for (Path p : entries()) {
        String n = p.getFileName().toString();
        if (validName(n) && Files.isDirectory(p)) {
          out.add(n);
        }
      }
    } catch (IOException e) {
      throw new StoreIOException("engine 'hashlog': cannot list " + dir + ": " + e, e);
    }
    return out;
  }

  /** The open sub-store of a keyspace, created (read-write) if absent. */
  synchronized HashLogStore get(String name) {
    checkOpen();
    HashLogStore s = open.get(name);
    if (s != null) {
      return s;
    }
    Path sub = dir.resolve(name);
    if (!readOnly && !Files.isDirectory(sub)) {
      try {
        boolean fresh = !Files.isDirectory(dir);
        storage.createDirectories(sub);
        storage.forceDirectory(dir);
        if (fresh) {
          storage.forceDirectory(storeDir);
        }
      } catch (IOException e) {
        throw new StoreIOException(
            "engine 'hashlog' at " + storeDir + ": cannot create keyspace '" + name + "': " + e, e);
      }
    }
    s = opener.open(name, sub);
    open.put(name, s);
    return s;
  }

  /** Every keyspace on disk, opened. */
  synchronized List<HashLogStore> all() {
    List<HashLogStore> out = new ArrayList<>();
    for (String n : names()) {
      out.add(get(n));
    }
    return out;
  }

  /** Drops a keyspace (see the class comment); whether it existed. */
  synchronized boolean drop(String name) {
    checkOpen();
    HashLogStore s = open.remove(name);
    if (s != null) {
      s.close();
    }
    Path sub = dir.resolve(name);
    if (!Files.isDirectory(sub)) {
      return false;
    }
    Path gone = dir.resolve(DROPPING + name);
    try {
      deleteTree(gone); // a leftover of an earlier drop whose deletion failed
      storage.move(sub, gone);
      storage.forceDirectory(dir);
    } catch (IOException | UncheckedIOException e) {
      throw new StoreIOException(
          "engine 'hashlog' at " + storeDir + ": cannot drop keyspace '" + name + "': " + e, e);
    }
    try {
      deleteTree(gone);
      storage.forceDirectory(dir);
    } catch (IOException | UncheckedIOException e) {
      // Dropped durably (renamed); the next read-write open deletes the rest.
      HashLogStore.LOG.log(Level.WARNING, "hashlog: could not delete dropped " + gone, e);
    }
    return true;
  }

  /**
   * Backs up every keyspace into {@code target/keyspaces/<name>} (each sub-store's own backup, see
   * {@link Backup}); creating and dropping keyspaces waits meanwhile.
   */
  synchronized void backupTo(Path target) throws IOException {
    List<String> names = names();
    if (names.isEmpty()) {
      return;
    }
    Path into = target.resolve(DIR_NAME);
    storage.createDirectories(into);
    for (String name : names) {
      Path t = into.resolve(name);
      storage.createDirectories(t);
      get(name).doBackup(t);
      storage.forceDirectory(t);
    }
    storage.forceDirectory(into);
  }

  /** Syncs the open sub-stores (the closed ones have nothing unsynced). */
  synchronized void syncOpen() {
    for (HashLogStore s : open.values()) {
      s.doSync();
    }
  }

  synchronized int openCount() {
    return open.size();
  }

  /** Closes every open sub-store (the store closes). */
  synchronized void close() {
    closed = true;
    RuntimeException first = null;
    for (HashLogStore s : open.values()) {
      try {
        s.close();
      } catch (RuntimeException e) {
        if (first == null) {
          first = e;
        }
      }
    }
    open.clear();
    if (first != null) {
      throw first;
    }
  }

  private void checkOpen() {
    if (closed) {
      throw new StoreClosedException("engine 'hashlog' at " + storeDir + " is closed");
    }
  }

  private List<Path> entries() throws IOException {
    List<Path> out = new ArrayList<>();
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
      for (Path p : ds) {
        out.add(p);
      }
    }
    out.sort(null);
    return out;
  }

  /** Whether {@code n} names a keyspace (not the default one). */
  static boolean validName(String n) {
    try {
      Store.checkKeyspaceName(n);
      return !Store.DEFAULT_KEYSPACE.equals(n);
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  private void deleteTree(Path p) throws IOException {
    if (!Files.exists(p)) {
      return;
    }
    try (Stream<Path> s = Files.walk(p)) {
      for (Path q : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
        storage.deleteIfExists(q);
      }
    }
  }
}
