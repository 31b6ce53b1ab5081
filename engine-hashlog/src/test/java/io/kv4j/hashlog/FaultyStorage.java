package io.kv4j.hashlog;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * A {@link Storage} for tests (after RocksDB's {@code FaultInjectionTestFS} and Lucene's {@code
 * MockDirectoryWrapper}): every call goes to the real file system, and beside it this keeps what a
 * power cut would leave.
 *
 * <ul>
 *   <li>Per file, the content that is durable: taken when the file is forced (read back at the
 *       start of the force, so a byte written while the force runs does not count), merged for a
 *       range when a mapping's range is forced.
 *   <li>Per directory, the entries that are durable: taken when the directory is forced. A file
 *       created or renamed since is not durable under its name; one deleted since comes back with
 *       its durable content.
 * </ul>
 *
 * <p>{@link #cutPower} writes what the power cut leaves into another directory: every file at its
 * durable content, under its durable name; with a {@link Random}, each page written but not forced
 * may also have reached the disk or not, independently (the kernel writes back in any order). Files
 * the store did not make through this (the lock and identity files) are copied as they are, as is
 * every file present when its directory was first seen, which counts as durable.
 *
 * <p>Also: the {@code n}-th write or force from now fails with an {@link IOException}, every read
 * of chosen files fails as a disk's {@code EIO} does, and every force and deletion can be traced.
 */
final class FaultyStorage implements Storage {
  private static final int PAGE = 4096;

  private final Storage real = Storage.NIO;
  private final Map<Path, Dir> dirs = new HashMap<>();
  private int writes;
  private int forces;
  private int failWriteAt;
  private String failWriteSuffix = "";
  private int failForceAt;
  private volatile String failReadSuffix;
  private volatile Consumer<String> trace;
  private volatile Runnable beforeEachCall;
  private volatile Runnable beforeFirstCopy;
  private volatile BiConsumer<Path, Thread> beforeExists;
  private volatile String deletingUnder;
  private volatile Runnable beforeDeleting;
  private volatile String forcingUnder;
  private volatile Runnable beforeForcing;
  private String writingSuffix; // guarded by this
  private int writingLeft; // guarded by this
  private Runnable beforeWriting; // guarded by this

  /** A file's durable content (shared by its names: hard links, a rename). */
  private static final class Node {
    byte[] durable = new byte[0];
  }

  private static final class Dir {
    final Map<String, Node> current = new HashMap<>();
    Map<String, Node> durable = new HashMap<>();
  }

  /**
   * Makes the {@code n}-th write from now (1 = the next) to a file whose name ends with {@code
   * suffix} fail, once.
   */
  synchronized void failWrite(int n, String suffix) {
    writes = 0;
    failWriteAt = n;
    failWriteSuffix = suffix;
  }

  /**
   * Makes every read of a file whose name ends with {@code suffix} fail from now on (null: none):
   * opening it to read, reading it, mapping it or asking its size. The {@link IOException} says
   * "Input/output error" and, as {@code EIO}'s does, names no file.
   */
  void failReads(String suffix) {
    failReadSuffix = suffix;
  }

  private void countRead(Path p) throws IOException {
    String suffix = failReadSuffix;
    if (suffix != null && p.getFileName().toString().endsWith(suffix)) {
      throw new IOException("Input/output error");
    }
  }

  /** Makes the {@code n}-th force (of a file, a mapping or a directory) from now fail, once. */
  synchronized void failForce(int n) {
    failForceAt = forces + n;
  }

  /**
   * Tells {@code t} of every force and deletion ({@code "force <path>"}, {@code "delete <path>"}).
   */
  void trace(Consumer<String> t) {
    trace = t;
  }

  /**
   * Runs {@code r} at the start of every call (of the store on this, or on one of its files), for a
   * test that throws from it.
   */
  void beforeEachCall(Runnable r) {
    beforeEachCall = r;
  }

  /**
   * Tells {@code hook} of every {@link #exists} call, with the path and the calling thread, before
   * it is answered and outside this storage's lock: a test may hold the caller there.
   */
  void beforeExists(BiConsumer<Path, Thread> hook) {
    beforeExists = hook;
  }

  /**
   * Runs {@code r} once, at the start of the first {@link #copy} or {@link #createLink} (a backup's
   * first file), outside this storage's lock: it may use the store.
   */
  void beforeFirstCopy(Runnable r) {
    beforeFirstCopy = r;
  }

  /**
   * Runs {@code r} once, before the first deletion of a path containing {@code fragment}, outside
   * this storage's lock (a crash test blocks in it).
   */
  void beforeDeleting(String fragment, Runnable r) {
    deletingUnder = fragment;
    beforeDeleting = r;
  }

  /**
   * Runs {@code r} once, before the first force of a file whose path contains {@code fragment},
   * outside this storage's lock (a test writes through the store from another thread in it).
   */
  void beforeForcing(String fragment, Runnable r) {
    forcingUnder = fragment;
    beforeForcing = r;
  }

  /**
   * Runs {@code r} once, before the {@code n}-th write (1 = the next) to a file whose name ends
   * with {@code suffix}, outside this storage's lock (a crash test blocks in it until it is
   * killed).
   */
  synchronized void beforeWriting(String suffix, int n, Runnable r) {
    writingSuffix = suffix;
    writingLeft = n;
    beforeWriting = r;
  }

  /** Runs the write hook if this write to {@code p} is the one it waits for. */
  private void writing(Path p) {
    Runnable r = null;
    synchronized (this) {
      if (beforeWriting != null
          && p.getFileName().toString().endsWith(writingSuffix)
          && --writingLeft == 0) {
        r = beforeWriting;
        beforeWriting = null;
      }
    }
    if (r != null) {
      r.run();
    }
  }

  /** Takes the force hook if {@code file} is under its fragment (at most once). */
  private Runnable takeForceHook(Path file) {
    String under = forcingUnder;
    if (under == null || !file.toString().contains(under)) {
      return null;
    }
    synchronized (this) {
      Runnable r = beforeForcing;
      beforeForcing = null;
      forcingUnder = null;
      return r;
    }
  }

  private void called() {
    Runnable r = beforeEachCall;
    if (r != null) {
      r.run();
    }
  }

  private void copying() {
    Runnable r;
    synchronized (this) {
      r = beforeFirstCopy;
      beforeFirstCopy = null;
    }
    if (r != null) {
      r.run();
    }
  }

  private void traced(String what, Path p) {
    Consumer<String> t = trace;
    if (t != null) {
      t.accept(what + " " + p);
    }
  }

  private synchronized void countWrite(Path p) throws IOException {
    if (p.getFileName().toString().endsWith(failWriteSuffix) && ++writes == failWriteAt) {
      throw new IOException("injected write failure (write " + writes + ", " + p + ")");
    }
  }

  private synchronized void countForce(Path p) throws IOException {
    if (++forces == failForceAt) {
      throw new IOException("injected force failure (force " + forces + ", " + p + ")");
    }
  }

  // ---------------------------------------------------------------- the model

  /** The directory's entries, first seen now: what it holds counts as durable. */
  private Dir dir(Path d) throws IOException {
    Path key = d.toAbsolutePath().normalize();
    Dir dir = dirs.get(key);
    if (dir == null) {
      dir = new Dir();
      if (Files.isDirectory(key)) {
        for (Path p : real.list(key)) {
          if (Files.isRegularFile(p)) {
            Node n = new Node();
            n.durable = Files.readAllBytes(p);
            dir.current.put(p.getFileName().toString(), n);
          }
        }
      }
      dir.durable = new HashMap<>(dir.current);
      dirs.put(key, dir);
    }
    return dir;
  }

  /**
   * The node of an existing file; one made by someone else since its directory was first seen is
   * adopted as durable.
   */
  private Node node(Path p) throws IOException {
    Dir d = dir(p.getParent());
    String name = p.getFileName().toString();
    Node n = d.current.get(name);
    if (n == null) {
      n = new Node();
      if (Files.exists(p)) {
        n.durable = Files.readAllBytes(p);
        d.durable.put(name, n);
      }
      d.current.put(name, n);
    }
    return n;
  }

  private Node fresh(Path p) throws IOException {
    Node n = new Node();
    dir(p.getParent()).current.put(p.getFileName().toString(), n);
    return n;
  }

  // ---------------------------------------------------------------- Storage

  @Override
  public synchronized File open(Path file, Mode mode) throws IOException {
    called();
    if (mode == Mode.READ) {
      countRead(file);
    }
    boolean existed = Files.exists(file);
    if (mode == Mode.CREATE_NEW || mode == Mode.READ_WRITE || mode == Mode.CREATE_TRUNCATE) {
      // Opening for writing may create the file (a write of its directory).
      if (!existed) {
        countWrite(file);
      }
    }
    File f = real.open(file, mode);
    Node n = existed ? node(file) : fresh(file);
    return new FaultyFile(f, n, file);
  }

  @Override
  public synchronized void move(Path from, Path to) throws IOException {
    called();
    if (Files.isDirectory(from)) {
      real.move(from, to); // directories (a keyspace dropped) are not modelled
      return;
    }
    countWrite(to);
    Node n = node(from);
    real.move(from, to);
    dir(from.getParent()).current.remove(from.getFileName().toString());
    dir(to.getParent()).current.put(to.getFileName().toString(), n);
  }

  @Override
  public boolean deleteIfExists(Path file) throws IOException {
    String under = deletingUnder;
    if (under != null && file.toString().contains(under)) {
      Runnable r;
      synchronized (this) {
        r = beforeDeleting;
        beforeDeleting = null;
        deletingUnder = null;
      }
      if (r != null) {
        r.run();
      }
    }
    return delete0(file);
  }

  private synchronized boolean delete0(Path file) throws IOException {
    called();
    if (!Files.exists(file)) {
      return false;
    }
    if (Files.isDirectory(file)) {
      return real.deleteIfExists(file); // directories are not modelled
    }
    node(file); // its durable content, should the deletion not be durable
    traced("delete", file);
    boolean gone = real.deleteIfExists(file);
    dir(file.getParent()).current.remove(file.getFileName().toString());
    return gone;
  }

  @Override
  public synchronized void forceDirectory(Path dir) throws IOException {
    called();
    countForce(dir);
    traced("force", dir);
    real.forceDirectory(dir);
    Dir d = dir(dir);
    d.durable = new HashMap<>(d.current);
  }

  @Override
  public void writeAtomically(Path file, byte[] content) throws IOException {
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    try (File f = open(tmp, Mode.CREATE_TRUNCATE)) {
      f.write(content, 0, content.length);
      f.force();
    }
    move(tmp, file);
    forceDirectory(file.getParent());
  }

  @Override
  public byte[] readAll(Path file) throws IOException {
    called();
    countRead(file);
    return real.readAll(file);
  }

  @Override
  public long size(Path file) throws IOException {
    called();
    countRead(file);
    return real.size(file);
  }

  @Override
  public boolean exists(Path p) {
    called();
    BiConsumer<Path, Thread> hook = beforeExists;
    if (hook != null) {
      hook.accept(p, Thread.currentThread());
    }
    return real.exists(p);
  }

  @Override
  public List<Path> list(Path dir) throws IOException {
    called();
    return real.list(dir);
  }

  @Override
  public void createDirectories(Path dir) throws IOException {
    called();
    real.createDirectories(dir);
  }

  @Override
  public void createLink(Path link, Path existing) throws IOException {
    copying();
    link0(link, existing);
  }

  private synchronized void link0(Path link, Path existing) throws IOException {
    called();
    countWrite(link);
    Node n = node(existing);
    real.createLink(link, existing);
    dir(link.getParent()).current.put(link.getFileName().toString(), n);
  }

  @Override
  public void copy(Path from, Path to) throws IOException {
    copying();
    copy0(from, to);
  }

  private synchronized void copy0(Path from, Path to) throws IOException {
    called();
    countWrite(to);
    real.copy(from, to);
    fresh(to);
  }

  // ---------------------------------------------------------------- power cut

  /**
   * Writes what a power cut now would leave of {@code root} (and the directories below it this has
   * seen) into {@code into}, an empty or missing directory; the store keeps running on the real
   * files. With {@code reorder}, each page written but not forced is kept or dropped at random.
   */
  synchronized void cutPower(Path root, Path into, Random reorder) throws IOException {
    Path r = root.toAbsolutePath().normalize();
    copyUnseen(r, into);
    for (Map.Entry<Path, Dir> e : dirs.entrySet()) {
      if (!e.getKey().startsWith(r)) {
        continue;
      }
      if (!Files.isDirectory(e.getKey())) {
        continue; // renamed or deleted (a dropped keyspace): not modelled
      }
      Path out = into.resolve(r.relativize(e.getKey()).toString());
      Files.createDirectories(out);
      Dir d = e.getValue();
      for (Path p : real.list(e.getKey())) {
        String name = p.getFileName().toString();
        if (Files.isRegularFile(p)
            && !d.current.containsKey(name)
            && !d.durable.containsKey(name)) {
          Files.copy(p, out.resolve(name)); // not made through this: as it is
        }
      }
      for (Map.Entry<String, Node> f : d.durable.entrySet()) {
        Path now = e.getKey().resolve(f.getKey());
        byte[] content = f.getValue().durable;
        if (reorder != null && d.current.get(f.getKey()) == f.getValue() && Files.exists(now)) {
          content = reordered(content, Files.readAllBytes(now), reorder);
        }
        Files.write(out.resolve(f.getKey()), content);
      }
    }
  }

  /** Copies the files below {@code root} in directories this never saw, as they are. */
  private void copyUnseen(Path root, Path into) throws IOException {
    Files.createDirectories(into);
    List<Path> all;
    try (Stream<Path> s = Files.walk(root)) {
      all = s.collect(java.util.stream.Collectors.toList());
    }
    for (Path p : all) {
      Path out = into.resolve(root.relativize(p).toString());
      if (Files.isDirectory(p)) {
        Files.createDirectories(out);
      } else if (!dirs.containsKey(p.getParent())) {
        Files.copy(p, out);
      }
    }
  }

  /**
   * The durable content with a random subset of the pages that differ in {@code now} taken from
   * {@code now}: unforced pages the kernel may have written back, in any order.
   */
  private static byte[] reordered(byte[] durable, byte[] now, Random random) {
    int pages = (Math.max(durable.length, now.length) + PAGE - 1) / PAGE;
    byte[] out = Arrays.copyOf(durable, Math.max(durable.length, now.length));
    int length = durable.length;
    for (int i = 0; i < pages; i++) {
      int from = i * PAGE;
      int to = Math.min(from + PAGE, out.length);
      if (from >= now.length) {
        break; // past the file as it is now: cut (an unforced truncation), or kept
      }
      int nowTo = Math.min(to, now.length);
      boolean differs =
          nowTo > durable.length || !Arrays.equals(durable, from, nowTo, now, from, nowTo);
      if (differs && random.nextBoolean()) {
        System.arraycopy(now, from, out, from, nowTo - from);
        length = Math.max(length, nowTo);
      }
    }
    if (now.length < durable.length && random.nextBoolean()) {
      length = now.length; // the unforced truncation reached the disk
    }
    return Arrays.copyOf(out, length);
  }

  /** An open file whose forces make its content durable in the model. */
  private final class FaultyFile implements File {
    private final File file;
    private final Node node;
    private final Path path;

    FaultyFile(File file, Node node, Path path) {
      this.file = file;
      this.node = node;
      this.path = path;
    }

    @Override
    public void seek(long position) throws IOException {
      file.seek(position);
    }

    @Override
    public void write(byte[] src, int off, int len) throws IOException {
      writing(path);
      countWrite(path);
      file.write(src, off, len);
    }

    @Override
    public void write(ByteBuffer... srcs) throws IOException {
      writing(path);
      countWrite(path);
      file.write(srcs);
    }

    @Override
    public int read(ByteBuffer dst, long position) throws IOException {
      countRead(path);
      return file.read(dst, position);
    }

    @Override
    public long size() throws IOException {
      return file.size();
    }

    @Override
    public void truncate(long length) throws IOException {
      file.truncate(length);
    }

    private byte[] content() throws IOException {
      long size = file.size();
      ByteBuffer b = ByteBuffer.allocate((int) size);
      while (b.hasRemaining() && file.read(b, b.position()) >= 0) {
        // keep reading
      }
      return Arrays.copyOf(b.array(), b.position());
    }

    @Override
    public void force() throws IOException {
      Runnable hook = takeForceHook(path);
      if (hook != null) {
        hook.run();
      }
      synchronized (FaultyStorage.this) {
        countForce(path);
        traced("force", path);
        byte[] now = content();
        file.force();
        node.durable = now;
      }
    }

    @Override
    public MappedByteBuffer map(boolean writable, long size) throws IOException {
      countRead(path);
      return file.map(writable, size);
    }

    @Override
    public void force(MappedByteBuffer map, int from, int len) throws IOException {
      synchronized (FaultyStorage.this) {
        countForce(path);
        traced("force", path);
        byte[] now = content();
        file.force(map, from, len);
        int to = Math.min(from + len, now.length);
        byte[] d = node.durable;
        if (to > d.length) {
          d = Arrays.copyOf(d, to);
        }
        if (to > from) {
          System.arraycopy(now, from, d, from, to - from);
        }
        node.durable = d;
      }
    }

    @Override
    public void close() throws IOException {
      file.close();
    }
  }
}
