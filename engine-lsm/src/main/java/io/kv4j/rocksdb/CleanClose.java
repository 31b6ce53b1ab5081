package io.kv4j.rocksdb;

import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;

/**
 * The clean-close record, {@value #FILE_NAME}: what a clean close left in the directory, so that
 * the next open can tell damage from what a crash leaves.
 *
 * <p>Why: RocksDB reads its MANIFEST and WAL like logs whose tail a crash may have torn, so a
 * MANIFEST or WAL cut to half its size looks like a crash and opens as an older state — and then
 * RocksDB deletes the table files that state does not list. After a clean close nothing may be
 * torn, so this record lets the open demand every file exactly as the close left it. It is written
 * after the database is closed (temporary file, {@code fsync}, rename, {@code fsync} of the
 * directory), and a read-write open removes it once RocksDB has opened the store, since from then
 * on a crash is possible again. A read-only open leaves it in place.
 *
 * <p><b>Format</b> (UTF-8 text, {@code \n} line ends), lines in this order:
 *
 * <table>
 *   <caption>lines of the clean-close record</caption>
 *   <tr><th>line</th><th>meaning</th></tr>
 *   <tr><td>{@code # kv4j rocksdb clean close ...}</td><td>a comment; ignored</td></tr>
 *   <tr><td>{@code current=MANIFEST-<n>}</td><td>the manifest {@code CURRENT} named at close</td></tr>
 *   <tr><td>{@code file=<name> size=<bytes> crc32c=<8 hex digits or ->}</td><td>one per MANIFEST,
 *       non-empty WAL ({@code *.log}, with a CRC32C of the whole file), table file ({@code *.sst})
 *       and blob file ({@code *.blob}; size only, their blocks carry RocksDB's own
 *       checksums)</td></tr>
 *   <tr><td>{@code crc32c=<8 hex digits>}</td><td>CRC32C of every byte before this line</td></tr>
 * </table>
 */
final class CleanClose {
  /** The record's file name in the store directory. */
  static final String FILE_NAME = "kv4j-clean-close";

  private static final Pattern MANIFEST = Pattern.compile("MANIFEST-(\\d+)");
  private static final Pattern ENTRY =
      Pattern.compile("file=(\\S+) size=(\\d+) crc32c=([0-9a-f]{8}|-)");

  /** What the record says about one file. */
  private record Entry(String name, long size, long crc) {}

  /** What {@link #check} found. */
  enum State {
    /** No record: the last session did not close cleanly (or predates the record). */
    ABSENT,
    /** A record from before the last read-write open (a crash right after RocksDB opened). */
    STALE,
    /** The record matches every file it lists. */
    VERIFIED
  }

  private CleanClose() {}

  /**
   * Records the files of a closed database.
   *
   * @param dir the store directory; the database in it is closed
   * @throws IOException if the record cannot be written
   */
  static void write(Path dir) throws IOException {
    String manifest = currentManifest(dir);
    if (manifest == null) {
      throw new IOException("CURRENT in " + dir + " does not name a manifest");
    }
    StringBuilder body = new StringBuilder();
    body.append("# kv4j rocksdb clean close: the files as the last clean close left them;")
        .append(" removed when the store is opened for writing\n");
    body.append("current=").append(manifest).append('\n');
    List<String> names = new ArrayList<>();
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
      for (Path p : ds) {
        names.add(p.getFileName().toString());
      }
    }
    names.sort(null);
    for (String n : names) {
      boolean log = n.endsWith(".log");
      if (!n.equals(manifest) && !log && !n.endsWith(".sst") && !n.endsWith(".blob")) {
        continue;
      }
      Path f = dir.resolve(n);
      long size = Files.size(f);
      if (log && size == 0) {
        continue; // an empty WAL holds nothing; RocksDB opens fine without it
      }
      String crc = log || n.equals(manifest) ? hex(crcOf(f)) : "-";
      body.append("file=").append(n).append(" size=").append(size);
      body.append(" crc32c=").append(crc).append('\n');
    }
    byte[] head = body.toString().getBytes(StandardCharsets.UTF_8);
    CRC32C c = new CRC32C();
    c.update(head);
    byte[] all = (body + "crc32c=" + hex(c.getValue()) + "\n").getBytes(StandardCharsets.UTF_8);
    StoreDirectory.writeAtomically(dir.resolve(FILE_NAME), all);
  }

  /**
   * Removes the record (after a read-write open), durably.
   *
   * @param dir the store directory
   * @throws IOException if it cannot be removed
   */
  static void remove(Path dir) throws IOException {
    if (Files.deleteIfExists(dir.resolve(FILE_NAME))) {
      StoreDirectory.syncDirectory(dir);
    }
  }

  /**
   * Checks the directory against the record, if there is one.
   *
   * @param dir the store directory
   * @return whether a record was there and held
   * @throws StoreCorruptedException if the record is damaged or a file differs from it
   * @throws StoreIOException if a file cannot be read
   */
  static State check(Path dir) {
    Path record = dir.resolve(FILE_NAME);
    byte[] raw;
    try {
      raw = Files.readAllBytes(record);
    } catch (NoSuchFileException e) {
      return State.ABSENT;
    } catch (IOException e) {
      throw new StoreIOException(where(dir) + ": cannot read " + record + ": " + e, e);
    }
    String text = new String(raw, StandardCharsets.UTF_8);
    int crcAt = text.lastIndexOf("crc32c=");
    int lineAt = text.lastIndexOf('\n', crcAt);
    boolean ok = crcAt > 0 && lineAt == crcAt - 1 && text.endsWith("\n");
    if (ok) {
      CRC32C c = new CRC32C();
      c.update(text.substring(0, crcAt).getBytes(StandardCharsets.UTF_8));
      ok = text.substring(crcAt + 7, text.length() - 1).equals(hex(c.getValue()));
    }
    String current = null;
    List<Entry> entries = new ArrayList<>();
    if (ok) {
      for (String line : text.substring(0, crcAt).split("\n")) {
        Matcher m = ENTRY.matcher(line);
        if (line.startsWith("current=")) {
          current = line.substring(8);
        } else if (m.matches()) {
          String crc = m.group(3);
          entries.add(
              new Entry(
                  m.group(1),
                  Long.parseLong(m.group(2)),
                  crc.equals("-") ? -1 : HexFormat.fromHexDigitsToLong(crc)));
        } else if (!line.startsWith("#")) {
          ok = false;
        }
      }
    }
    if (!ok || current == null || !MANIFEST.matcher(current).matches()) {
      throw new StoreCorruptedException(
          where(dir)
              + ": the clean-close record "
              + record
              + " is damaged (its checksum or layout is wrong); it lists the files a clean close"
              + " left, to tell damage from a crash",
          record,
          -1);
    }
    String now = currentManifest(dir);
    if (!current.equals(now)) {
      if (now != null && number(now) > number(current) && nonEmpty(dir.resolve(now))) {
        return State.STALE; // a read-write open started a new manifest, then crashed
      }
      throw new StoreCorruptedException(
          where(dir)
              + ": CURRENT names "
              + (now == null ? "no manifest" : now)
              + " but the store was closed with "
              + current
              + " (CURRENT is damaged)",
          dir.resolve("CURRENT"),
          -1);
    }
    for (Entry e : entries) {
      verify(dir, e);
    }
    return State.VERIFIED;
  }

  private static void verify(Path dir, Entry e) {
    Path f = dir.resolve(e.name());
    long size;
    try {
      size = Files.size(f);
    } catch (NoSuchFileException x) {
      throw new StoreCorruptedException(
          where(dir)
              + ": "
              + f
              + " is missing; the last clean close left it with "
              + e.size()
              + " bytes"
              + role(e.name()),
          f,
          -1);
    } catch (IOException x) {
      throw new StoreIOException(where(dir) + ": cannot read " + f + ": " + x, x);
    }
    if (size != e.size()) {
      throw new StoreCorruptedException(
          where(dir)
              + ": "
              + f
              + " has "
              + size
              + " bytes; the last clean close left "
              + e.size()
              + role(e.name()),
          f,
          Math.min(size, e.size()));
    }
    if (e.crc() < 0) {
      return;
    }
    long crc;
    try {
      crc = crcOf(f);
    } catch (IOException x) {
      throw new StoreIOException(where(dir) + ": cannot read " + f + ": " + x, x);
    }
    if (crc != e.crc()) {
      long at = -1;
      try {
        // Find the damaged record to name its offset; it throws for damage a crash cannot make.
        RecordLog.Scan s = RecordLog.check(f, e.name().endsWith(".log"));
        at = s.tornAt();
      } catch (StoreCorruptedException x) {
        at = x.offset();
      } catch (IOException x) {
        // Keep -1: the checksum already says the file changed.
      }
      throw new StoreCorruptedException(
          where(dir)
              + ": "
              + f
              + " changed since the last clean close (CRC32C "
              + hex(crc)
              + ", recorded "
              + hex(e.crc())
              + ")"
              + (at >= 0 ? ", first bad record at offset " + at : "")
              + role(e.name()),
          f,
          at);
    }
  }

  private static String role(String name) {
    if (name.endsWith(".log")) {
      return " (write-ahead log)";
    }
    if (name.endsWith(".sst")) {
      return " (table file)";
    }
    if (name.startsWith("MANIFEST-")) {
      return " (MANIFEST, the list of table files)";
    }
    return "";
  }

  /** The manifest {@code CURRENT} names, or null if it names none. */
  static String currentManifest(Path dir) {
    byte[] raw;
    try {
      raw = Files.readAllBytes(dir.resolve("CURRENT"));
    } catch (NoSuchFileException e) {
      return null;
    } catch (IOException e) {
      throw new StoreIOException(where(dir) + ": cannot read CURRENT: " + e, e);
    }
    String s = new String(raw, StandardCharsets.ISO_8859_1);
    if (!s.endsWith("\n")) {
      return null;
    }
    s = s.substring(0, s.length() - 1);
    return MANIFEST.matcher(s).matches() ? s : null;
  }

  private static long number(String manifest) {
    try {
      return Long.parseLong(manifest.substring("MANIFEST-".length()));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private static boolean nonEmpty(Path f) {
    try {
      return Files.size(f) > 0;
    } catch (IOException e) {
      return false;
    }
  }

  static long crcOf(Path f) throws IOException {
    CRC32C c = new CRC32C();
    byte[] buf = new byte[1 << 16];
    try (InputStream in = Files.newInputStream(f)) {
      for (int n; (n = in.read(buf)) > 0; ) {
        c.update(buf, 0, n);
      }
    }
    return c.getValue();
  }

  private static String hex(long crc) {
    return String.format("%08x", crc);
  }

  private static String where(Path dir) {
    return "engine '" + RocksDbProvider.ID + "' at " + dir;
  }
}
