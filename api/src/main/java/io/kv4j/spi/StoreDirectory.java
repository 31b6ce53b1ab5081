package io.kv4j.spi;

import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreException;
import io.kv4j.StoreIOException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;

/**
 * A persistent store's directory, opened the one way every embedded engine opens it: the create
 * rules, the lock, and the store's <b>identity</b> — which engine made it, in which format.
 *
 * <p><b>What {@link #open} decides</b>, before the engine touches a file:
 *
 * <ul>
 *   <li>A missing directory is created only when {@code create-if-missing} is true and the store is
 *       not read-only; otherwise {@link StoreIOException}.
 *   <li>A read-write open takes the {@link DirectoryLock}. A read-only open takes none and creates
 *       nothing, so it works on read-only media and in directories the process cannot write; what
 *       still protects the store then is the engine's own reader safety (each engine's README says
 *       what it is) and the fact that a read-only store never writes.
 *   <li>With an identity file ({@value #IDENTITY_FILE}): another engine's id fails the open with
 *       {@link StoreCorruptedException} naming both engines and the {@code kv4j copy} command that
 *       migrates; a newer format than the engine reads fails it too; every file the layout requires
 *       must exist and be non-empty, else {@link StoreCorruptedException} — a store that once held
 *       data is never silently re-created.
 *   <li>Without one: an empty directory (only the lock file, or nothing) is a new store, created
 *       only under the rules above. A directory whose files the engine recognises as its own is a
 *       store made before identities existed: it is adopted, and a read-write open records its
 *       identity once the engine has opened it ({@link #created()}). Any other content fails the
 *       open with {@link StoreCorruptedException} listing the files, naming the engine that made
 *       them when it can tell.
 * </ul>
 *
 * <p>A new store's engine calls {@link #created()} once its first files are complete; the identity
 * is written then, atomically (temporary file, {@code fsync}, rename, {@code fsync} of the
 * directory). A crash before that leaves the engine's own files without an identity, which the next
 * open adopts.
 *
 * <p><b>Identity file format</b> ({@value #IDENTITY_FILE}, UTF-8 text, {@code \n} line ends):
 *
 * <table>
 *   <caption>lines of the identity file, in this order</caption>
 *   <tr><th>line</th><th>meaning</th></tr>
 *   <tr><td>{@code # kv4j store identity ...}</td><td>a comment for people; ignored</td></tr>
 *   <tr><td>{@code engine=<id>}</td><td>the id of the engine that created the store</td></tr>
 *   <tr><td>{@code format=<n>}</td><td>that engine's on-disk format version, a positive int</td></tr>
 *   <tr><td>{@code created=<instant>}</td><td>ISO-8601 UTC, informational</td></tr>
 *   <tr><td>{@code crc32c=<8 hex digits>}</td><td>CRC32C of every byte before this line</td></tr>
 * </table>
 *
 * <p>Instances are not thread-safe; an engine keeps one per open store and closes it with the
 * store, exactly once.
 */
public final class StoreDirectory implements AutoCloseable {
  /** The name of the identity file inside a store directory. */
  public static final String IDENTITY_FILE = "kv4j.store";

  private static final String TEMP_SUFFIX = ".tmp";

  /**
   * Files of other kv4j engines, to name the engine in the message when a directory holds one
   * without an identity. Only used for messages, never to decide.
   */
  private static final Map<String, Predicate<String>> KNOWN;

  static {
    Map<String, Predicate<String>> m = new LinkedHashMap<>();
    m.put("rocksdb", n -> n.equals("CURRENT") || n.startsWith("MANIFEST-") || n.endsWith(".sst"));
    m.put("lmdb", n -> n.equals("data.mdb"));
    m.put("hashlog", n -> n.startsWith("seg-") && (n.endsWith(".log") || n.endsWith(".hint")));
    m.put("sqlite", n -> n.startsWith("kv.sqlite"));
    KNOWN = m;
  }

  private final Path path;
  private final String engine;
  private int format;
  private final boolean isNew;
  private final boolean readOnly;
  private final DirectoryLock lock;
  private boolean identityWritten;
  private boolean closed;

  private StoreDirectory(
      Path path,
      String engine,
      int format,
      boolean isNew,
      boolean readOnly,
      DirectoryLock lock,
      boolean identityWritten) {
    this.path = path;
    this.engine = engine;
    this.format = format;
    this.isNew = isNew;
    this.readOnly = readOnly;
    this.lock = lock;
    this.identityWritten = identityWritten;
  }

  /**
   * What an engine's directory holds: its id, the format it writes, which file names are its own
   * and which must exist in a store that was created.
   *
   * @param engine the engine id, recorded in the identity
   * @param format the format version the engine writes and reads (a positive int); identities with
   *     a higher version are refused
   * @param ownsFile whether a file name (no directory) is one of the engine's files, used to adopt
   *     stores made before identities existed and to refuse foreign directories
   * @param requiredFiles files that every created store has, non-empty (checked when an identity is
   *     present); empty when the engine checks its files itself
   */
  public record Layout(
      String engine, int format, Predicate<String> ownsFile, Set<String> requiredFiles) {
    /**
     * Checks the arguments.
     *
     * @param engine the engine id
     * @param format the format version, positive
     * @param ownsFile which file names are the engine's
     * @param requiredFiles files every created store has
     */
    public Layout {
      Objects.requireNonNull(engine, "engine");
      Objects.requireNonNull(ownsFile, "ownsFile");
      requiredFiles = Set.copyOf(requiredFiles);
      if (format < 1) {
        throw new IllegalArgumentException("format must be positive, got " + format);
      }
    }
  }

  /**
   * Opens a store directory under the rules in the class comment.
   *
   * @param config the store's config: path, create-if-missing, read-only
   * @param layout the engine's layout
   * @return the opened directory; close it exactly once, when the store closes or its open fails
   * @throws IllegalArgumentException if the config has no path
   * @throws StoreIOException if the directory is missing and may not be created, or cannot be read
   * @throws io.kv4j.StoreLockedException (read-write) if the directory is open elsewhere
   * @throws StoreCorruptedException if the directory holds another engine's store, unknown files, a
   *     damaged identity, or a created store whose required files are gone
   */
  public static StoreDirectory open(StoreConfig config, Layout layout) {
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(layout, "layout");
    String engine = layout.engine();
    Path given = config.path();
    if (given == null) {
      throw new IllegalArgumentException(
          "engine '" + engine + "' needs a path: the directory that holds the store");
    }
    boolean readOnly = config.readOnly();
    if (!Files.isDirectory(given)) {
      if (Files.exists(given)) {
        throw new StoreIOException(
            "engine '" + engine + "' at " + given + ": the path exists and is not a directory",
            (Throwable) null);
      }
      if (readOnly || !config.createIfMissing()) {
        throw new StoreIOException(
            "engine '"
                + engine
                + "' at "
                + given
                + ": no store there (the directory does not exist"
                + (readOnly
                    ? "; read-only stores are never created)"
                    : " and create-if-missing is false)"),
            (Throwable) null);
      }
      try {
        Files.createDirectories(given);
      } catch (IOException e) {
        throw new StoreIOException(
            "engine '" + engine + "' at " + given + ": cannot create the directory: " + e, e);
      }
    }
    Path dir;
    try {
      dir = given.toRealPath();
    } catch (IOException e) {
      throw new StoreIOException(
          "engine '" + engine + "': cannot resolve store directory " + given + ": " + e, e);
    }
    DirectoryLock lock = readOnly ? null : DirectoryLock.acquire(dir, engine);
    boolean ok = false;
    try {
      StoreDirectory d = decide(dir, config, layout, lock);
      ok = true;
      return d;
    } finally {
      if (!ok && lock != null) {
        lock.close();
      }
    }
  }

  private static StoreDirectory decide(
      Path dir, StoreConfig config, Layout layout, DirectoryLock lock) {
    String engine = layout.engine();
    String where = "engine '" + engine + "' at " + dir;
    boolean readOnly = config.readOnly();
    Path idFile = dir.resolve(IDENTITY_FILE);
    Identity id = Identity.read(idFile, where);
    if (id != null) {
      if (!id.engine.equals(engine)) {
        throw foreign(dir, idFile, engine, id.engine, "its identity file " + idFile + " says so");
      }
      if (id.format > layout.format()) {
        throw new StoreCorruptedException(
            where
                + ": the store has format "
                + id.format
                + ", newer than format "
                + layout.format()
                + " that this version of the engine reads; use the kv4j version that wrote it",
            idFile,
            -1);
      }
      for (String required : new TreeSet<>(layout.requiredFiles())) {
        Path f = dir.resolve(required);
        long size;
        try {
          size = Files.size(f);
        } catch (NoSuchFileException e) {
          throw new StoreCorruptedException(
              where
                  + ": the store's data file "
                  + f
                  + " is missing, but its identity file "
                  + idFile
                  + " says a store was created here: refusing to create an empty store in its"
                  + " place (restore the file, or delete the directory to start afresh)",
              f,
              -1);
        } catch (IOException e) {
          throw new StoreIOException(where + ": cannot read " + f + ": " + e, e);
        }
        if (size == 0) {
          throw new StoreCorruptedException(
              where
                  + ": the store's data file "
                  + f
                  + " is empty (0 bytes), but its identity file "
                  + idFile
                  + " says a store was created here: refusing to treat it as a new store",
              f,
              0);
        }
      }
      return new StoreDirectory(dir, engine, id.format, false, readOnly, lock, true);
    }
    List<String> names = listNames(dir, where);
    if (names.isEmpty()) {
      if (readOnly) {
        throw new StoreIOException(
            where + ": no store there (the directory is empty; read-only stores are never created)",
            (Throwable) null);
      }
      if (!config.createIfMissing()) {
        throw new StoreIOException(
            where + ": no store there (the directory is empty and create-if-missing is false)",
            (Throwable) null);
      }
      return new StoreDirectory(dir, engine, layout.format(), true, false, lock, false);
    }
    List<String> foreignNames = new ArrayList<>();
    for (String n : names) {
      if (!layout.ownsFile().test(n)) {
        foreignNames.add(n);
      }
    }
    if (foreignNames.isEmpty()) {
      // A store made before identities existed: adopt it, at the format of that time (1). Its
      // identity is written by created(), once the engine has opened and checked the files: a
      // directory holding a damaged or foreign file of the same name must not be stamped first.
      return new StoreDirectory(dir, engine, 1, false, readOnly, lock, false);
    }
    for (Map.Entry<String, Predicate<String>> k : KNOWN.entrySet()) {
      if (!k.getKey().equals(engine) && foreignNames.stream().anyMatch(k.getValue())) {
        throw foreign(
            dir, null, engine, k.getKey(), "its files look like one (" + show(names) + ")");
      }
    }
    throw new StoreCorruptedException(
        where
            + ": the directory holds files that are not a "
            + engine
            + " store ("
            + show(foreignNames)
            + "); stores are created only in a missing or empty directory",
        dir.resolve(foreignNames.get(0)),
        -1);
  }

  /** The message of {@link #foreign}, from "the directory holds" on; group 1 the other engine. */
  private static final Pattern FOREIGN =
      Pattern.compile(
          "the directory holds a '([^']+)' store \\(.*\\), not a '[^']+' one; open it with engine"
              + " '\\1'",
          Pattern.DOTALL);

  /**
   * Whether an {@link #open} failed because the directory holds another engine's store — told by
   * its identity file, or by files another engine recognises as its own — rather than damaged data.
   * Both are {@link StoreCorruptedException}s (the open must not go on in either case), but a
   * caller may want to tell them apart: the data of another engine's store is most likely intact
   * and opens with that engine, so a tool such as {@code kv4j} reports it with an exit code of its
   * own.
   *
   * @param e an exception from opening a store
   * @return the id of the engine whose store the directory holds, or empty for any other corruption
   */
  public static Optional<String> foreignEngine(StoreCorruptedException e) {
    Objects.requireNonNull(e, "e");
    String message = e.getMessage();
    Matcher m = FOREIGN.matcher(message == null ? "" : message);
    return m.find() ? Optional.of(m.group(1)) : Optional.empty();
  }

  private static StoreCorruptedException foreign(
      Path dir, Path file, String engine, String other, String why) {
    return new StoreCorruptedException(
        "engine '"
            + engine
            + "' at "
            + dir
            + ": the directory holds a '"
            + other
            + "' store ("
            + why
            + "), not a '"
            + engine
            + "' one; open it with engine '"
            + other
            + "', or migrate it with: kv4j copy --from "
            + other
            + ":"
            + dir
            + " --to "
            + engine
            + ":<new directory>",
        file == null ? dir : file,
        -1);
  }

  private static String show(List<String> names) {
    List<String> shown = names.size() > 5 ? names.subList(0, 5) : names;
    return String.join(", ", shown) + (names.size() > 5 ? ", ... " + names.size() + " in all" : "");
  }

  /** The directory's entries, without the lock file, the identity and its temporary file. */
  private static List<String> listNames(Path dir, String where) {
    List<String> out = new ArrayList<>();
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
      for (Path p : ds) {
        String n = p.getFileName().toString();
        if (n.equals(DirectoryLock.FILE_NAME)
            || n.equals(IDENTITY_FILE)
            || n.equals(IDENTITY_FILE + TEMP_SUFFIX)
            || n.equals("lost+found")) {
          continue;
        }
        out.add(n);
      }
    } catch (IOException e) {
      throw new StoreIOException(where + ": cannot list the directory: " + e, e);
    }
    out.sort(null);
    return out;
  }

  /**
   * The directory, resolved to its real path.
   *
   * @return the directory
   */
  public Path path() {
    return path;
  }

  /**
   * Whether the store is new: the directory was missing or empty, and the engine must create its
   * files and then call {@link #created()}.
   *
   * @return true for a new store
   */
  public boolean isNew() {
    return isNew;
  }

  /**
   * The format version of the store: the recorded one, the engine's for a new store, 1 for an
   * adopted store made before identities existed.
   *
   * @return the format version
   */
  public int format() {
    return format;
  }

  /**
   * Whether the directory was opened without a lock, for reading only.
   *
   * @return true when read-only
   */
  public boolean readOnly() {
    return readOnly;
  }

  /**
   * Records the store's identity, atomically: call it on every read-write open once the engine's
   * files are complete — for a new store after creating its first files and before acknowledging
   * any write, for an adopted store (made before identities existed) once the engine has opened and
   * checked them. Does nothing for a store whose identity is already recorded.
   *
   * @throws StoreIOException if the identity cannot be written
   * @throws IllegalStateException if the directory is read-only or closed
   */
  public void created() {
    if (closed) {
      throw new IllegalStateException("store directory " + path + " is closed");
    }
    if (readOnly) {
      throw new IllegalStateException("store directory " + path + " is open read-only");
    }
    if (!identityWritten) {
      writeIdentity();
    }
  }

  /**
   * Like {@link #created()}, recording {@code format} for a store whose identity is not yet
   * written: for an adopted store whose format the engine recognised from its files (it is 1 by
   * default), or a new one created in an older format on request.
   *
   * @param format the format version to record, positive
   * @throws IllegalArgumentException if format is not positive
   */
  public void created(int format) {
    if (format < 1) {
      throw new IllegalArgumentException("format must be positive, got " + format);
    }
    if (!identityWritten && !readOnly && !closed) {
      this.format = format;
    }
    created();
  }

  private void writeIdentity() {
    String body =
        "# kv4j store identity: written once when the store was created; do not edit\n"
            + "engine="
            + engine
            + "\nformat="
            + format
            + "\ncreated="
            + Instant.now().truncatedTo(ChronoUnit.SECONDS)
            + "\n";
    byte[] head = body.getBytes(StandardCharsets.UTF_8);
    CRC32C crc = new CRC32C();
    crc.update(head);
    byte[] all =
        (body + "crc32c=" + String.format("%08x", crc.getValue()) + "\n")
            .getBytes(StandardCharsets.UTF_8);
    try {
      writeAtomically(path.resolve(IDENTITY_FILE), all);
      identityWritten = true;
    } catch (IOException e) {
      throw new StoreIOException(
          "engine '" + engine + "' at " + path + ": cannot write the identity file: " + e, e);
    }
  }

  /**
   * Replaces a small file atomically and durably: writes {@code <name>.tmp} beside it, forces it,
   * renames it over the file and forces the directory. A crash leaves the old content or the new,
   * never a mix; a stale {@code .tmp} may remain (engines treat it as their own and delete it).
   *
   * @param file the file to replace
   * @param content its new content
   * @throws IOException if a write, sync or rename fails
   */
  public static void writeAtomically(Path file, byte[] content) throws IOException {
    Path tmp = file.resolveSibling(file.getFileName() + TEMP_SUFFIX);
    try (FileChannel ch =
        FileChannel.open(
            tmp,
            StandardOpenOption.CREATE,
            StandardOpenOption.TRUNCATE_EXISTING,
            StandardOpenOption.WRITE)) {
      ByteBuffer b = ByteBuffer.wrap(content);
      while (b.hasRemaining()) {
        ch.write(b);
      }
      ch.force(true);
    }
    try {
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
    } catch (AtomicMoveNotSupportedException e) {
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
    }
    syncDirectory(file.getParent());
  }

  /**
   * Makes a directory's entries (files created, renamed or deleted in it) durable, where the file
   * system supports it.
   *
   * @param dir the directory
   * @throws IOException if the sync fails
   */
  public static void syncDirectory(Path dir) throws IOException {
    FileChannel ch;
    try {
      ch = FileChannel.open(dir, StandardOpenOption.READ);
    } catch (IOException e) {
      // Some platforms cannot open a directory; a rename is then as durable as it gets there.
      return;
    }
    try (ch) {
      ch.force(true);
    }
  }

  /** Releases the lock (read-write). Idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (lock != null) {
      lock.close();
    }
  }

  /** A parsed identity file. */
  private record Identity(String engine, int format) {
    static Identity read(Path file, String where) {
      byte[] raw;
      try {
        raw = Files.readAllBytes(file);
      } catch (NoSuchFileException e) {
        return null;
      } catch (IOException e) {
        throw new StoreIOException(where + ": cannot read the identity file " + file + ": " + e, e);
      }
      String text = new String(raw, StandardCharsets.UTF_8);
      int crcAt = text.lastIndexOf("crc32c=");
      if (raw.length == 0 || crcAt < 0 || !text.endsWith("\n")) {
        throw damaged(file, where, raw.length == 0 ? "it is empty" : "it is cut short");
      }
      String crcText = text.substring(crcAt + "crc32c=".length(), text.length() - 1);
      byte[] head = text.substring(0, crcAt).getBytes(StandardCharsets.UTF_8);
      CRC32C crc = new CRC32C();
      crc.update(head);
      long want;
      try {
        want = HexFormat.fromHexDigitsToLong(crcText);
      } catch (IllegalArgumentException e) {
        throw damaged(file, where, "its checksum line is unreadable");
      }
      if (crcText.length() != 8 || want != crc.getValue()) {
        throw damaged(file, where, "its checksum does not match");
      }
      String engine = null;
      int format = -1;
      for (String line : text.substring(0, crcAt).split("\n", -1)) {
        if (line.startsWith("engine=")) {
          engine = line.substring("engine=".length());
        } else if (line.startsWith("format=")) {
          try {
            format = Integer.parseInt(line.substring("format=".length()));
          } catch (NumberFormatException e) {
            throw damaged(file, where, "its format line is unreadable");
          }
        }
      }
      if (engine == null || engine.isEmpty() || format < 1) {
        throw damaged(file, where, "it lacks the engine or format line");
      }
      return new Identity(engine, format);
    }

    private static StoreException damaged(Path file, String where, String why) {
      return new StoreCorruptedException(
          where
              + ": the identity file "
              + file
              + " is damaged ("
              + why
              + "); it records which engine made the store",
          file,
          -1);
    }
  }
}
