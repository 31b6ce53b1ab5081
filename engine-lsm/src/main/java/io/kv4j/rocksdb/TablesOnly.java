package io.kv4j.rocksdb;

import io.kv4j.KeyRange;
import io.kv4j.spi.SalvageSink;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.TreeMap;
import org.rocksdb.RocksDBException;
import org.rocksdb.TableProperties;

/**
 * Salvage without the MANIFEST (damaged, missing, or refused by RocksDB): the table files and WALs
 * read on their own, and a key handed over only when every version of it that can be seen agrees.
 *
 * <p>Without the MANIFEST nothing says which table files are live, which level they are on, or in
 * which order their versions were written; table files hold sequence numbers, but RocksDB's table
 * reader does not show them, nor deletions. So the rule is agreement: a key is handed over if every
 * readable table of its column family that holds it holds the same value, every WAL operation on it
 * is a put of that same value (or, when no table holds it, the newest WAL operation is a put), no
 * table of the column family that holds deletions lacks it (its deletion could be the newer
 * version), no damaged block of such a table may have held it, and no damaged WAL record appears to
 * have written it. Otherwise it is lost, and counted. A table file that cannot be opened at all
 * could hold a newer version of any key: then nothing is handed over.
 *
 * <p>What it cannot know: a table file RocksDB had made obsolete (compacted away) but not yet
 * deleted, whose newer versions were dropped together with their deletions, can bring back a value
 * that was deleted, when the table holding the deletion was deleted already.
 */
final class TablesOnly {
  private final Path copy;
  private final Map<String, Path> origin;
  private final Regions regions;
  private final SalvageSink sink;

  /** Keys damaged WAL records appear to have written, by column family id ({@link Salvage}). */
  private final Map<Integer, Map<ByteBuffer, long[]>> suspects;

  TablesOnly(
      Path copy,
      Map<String, Path> origin,
      Regions regions,
      SalvageSink sink,
      Map<Integer, Map<ByteBuffer, long[]>> suspects) {
    this.copy = copy;
    this.origin = origin;
    this.regions = regions;
    this.sink = sink;
    this.suspects = suspects;
  }

  /** A readable table file. */
  private static final class Table {
    final String name;
    final String family;
    final int familyId;
    final boolean deletes;

    Table(String name, String family, int familyId, boolean deletes) {
      this.name = name;
      this.family = family;
      this.familyId = familyId;
      this.deletes = deletes;
    }
  }

  /** The WAL operations on one key: the newest, and whether all of them put one value. */
  private static final class Ops {
    long newest = -1;
    boolean delete;
    byte[] value;
    boolean uniform = true;

    void add(long seq, boolean del, byte[] v) {
      if (newest >= 0 && (del || delete || !Arrays.equals(v, value))) {
        uniform = false;
      }
      if (seq >= newest) {
        newest = seq;
        delete = del;
        value = v;
      }
    }
  }

  void run() {
    Path manifestish = where();
    List<Table> tables = new ArrayList<>();
    String poison = null;
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(copy, "*.sst")) {
      List<Path> files = new ArrayList<>();
      ds.forEach(files::add);
      files.sort(null);
      for (Path f : files) {
        String name = f.getFileName().toString();
        try (TableScan t = TableScan.open(f)) {
          TableProperties p = t.properties();
          tables.add(
              new Table(
                  name,
                  new String(p.getColumnFamilyName(), StandardCharsets.UTF_8),
                  (int) p.getColumnFamilyId(),
                  p.getNumDeletions() + p.getNumRangeDeletions() > 0));
          if (p.getNumMergeOperands() > 0) {
            poison = name + " holds merge operands, which only their merge operator can resolve";
          }
        } catch (RocksDBException e) {
          regions.add(
              new Region(
                  source(name),
                  TableScan.blockAt(String.valueOf(e.getMessage()))[0],
                  -1,
                  null,
                  -1,
                  null,
                  "table file unreadable: " + e.getMessage()));
          poison = name + " cannot be read, and could hold a newer version of any key";
        }
      }
    } catch (IOException e) {
      poison = "the table files cannot be listed: " + e;
    }
    Map<Integer, String> names = new HashMap<>();
    names.put(0, "default");
    for (Table t : tables) {
      names.putIfAbsent(t.familyId, t.family);
    }
    Map<Integer, TreeMap<byte[], Ops>> wal = new HashMap<>();
    try {
      readWals(wal);
    } catch (IllegalArgumentException | IOException e) {
      poison = "a WAL holds a write batch that cannot be read: " + e.getMessage();
    }
    if (poison != null) {
      regions.add(
          new Region(
              manifestish,
              -1,
              -1,
              null,
              -1,
              null,
              "without an intact MANIFEST nothing was salvaged: " + poison));
      return;
    }
    Map<String, List<Table>> byFamily = new TreeMap<>();
    for (Table t : tables) {
      byFamily.computeIfAbsent(t.family, f -> new ArrayList<>()).add(t);
    }
    for (Map.Entry<Integer, TreeMap<byte[], Ops>> e : wal.entrySet()) {
      String family = names.get(e.getKey());
      if (family == null) {
        regions.add(
            new Region(
                manifestish,
                -1,
                -1,
                null,
                e.getValue().size(),
                null,
                "without an intact MANIFEST the name of column family "
                    + e.getKey()
                    + " is unknown: its keys written in the WAL are lost"));
      } else {
        byFamily.computeIfAbsent(family, f -> new ArrayList<>());
      }
    }
    for (Map.Entry<String, List<Table>> e : byFamily.entrySet()) {
      String keyspace = Column.keyspaceOf(e.getKey().getBytes(StandardCharsets.UTF_8));
      if (keyspace != null && keyspace.isEmpty()) {
        continue;
      }
      int id = -1;
      for (Map.Entry<Integer, String> n : names.entrySet()) {
        if (n.getValue().equals(e.getKey())) {
          id = n.getKey();
        }
      }
      family(
          manifestish,
          keyspace,
          e.getValue(),
          wal.getOrDefault(id, new TreeMap<>()),
          suspects.getOrDefault(id, Map.of()));
    }
  }

  /** The file to blame for what this mode cannot tell: the MANIFEST, or CURRENT. */
  private Path where() {
    String m = CleanClose.currentManifest(copy);
    return source(m != null ? m : Opening.CURRENT);
  }

  private Path source(String name) {
    Path p = origin.get(name);
    return p != null ? p : copy.resolve(name);
  }

  /** One column family: merge the tables' keys and the WAL's, hand over what agrees. */
  private void family(
      Path blame,
      String keyspace,
      List<Table> tables,
      TreeMap<byte[], Ops> wal,
      Map<ByteBuffer, long[]> lostInWal) {
    List<Scan> scans = new ArrayList<>();
    List<KeyRange> damaged = new ArrayList<>();
    long lost = 0;
    KeyRange lostRange = null;
    try {
      for (Table t : tables) {
        Scan s = new Scan(t, TableScan.open(copy.resolve(t.name)));
        scans.add(s);
      }
    } catch (RocksDBException e) {
      for (Scan s : scans) {
        s.scan.close();
      }
      regions.add(
          new Region(
              source(tables.get(scans.size()).name),
              -1,
              -1,
              keyspace,
              -1,
              null,
              "table file unreadable on a second look, nothing of its column family salvaged: "
                  + e.getMessage()));
      return;
    }
    PriorityQueue<Scan> queue =
        new PriorityQueue<>((a, b) -> Arrays.compareUnsigned(a.scan.key(), b.scan.key()));
    try {
      for (Scan s : scans) {
        s.scan.seekToFirst();
        s.collect(damaged, keyspace);
        if (s.scan.valid()) {
          queue.add(s);
        }
      }
      Iterator<Map.Entry<byte[], Ops>> w = wal.entrySet().iterator();
      Map.Entry<byte[], Ops> op = w.hasNext() ? w.next() : null;
      while (!queue.isEmpty() || op != null) {
        byte[] key =
            queue.isEmpty()
                ? op.getKey()
                : op == null || Arrays.compareUnsigned(queue.peek().scan.key(), op.getKey()) <= 0
                    ? queue.peek().scan.key()
                    : op.getKey();
        List<Scan> holders = new ArrayList<>();
        List<byte[]> values = new ArrayList<>();
        while (!queue.isEmpty() && Arrays.equals(queue.peek().scan.key(), key)) {
          Scan s = queue.poll();
          holders.add(s);
          values.add(s.scan.value());
          s.scan.next();
          s.collect(damaged, keyspace);
          if (s.scan.valid()) {
            queue.add(s);
          }
        }
        Ops ops = null;
        if (op != null && Arrays.equals(op.getKey(), key)) {
          ops = op.getValue();
          op = w.hasNext() ? w.next() : null;
        }
        byte[] value =
            lostInWal.containsKey(ByteBuffer.wrap(key))
                ? Ambiguous.VALUE
                : agreed(key, tables, holders, values, ops, damaged);
        if (value == Ambiguous.VALUE) {
          lost++;
          KeyRange one = KeyRange.all().gte(key).lte(key);
          lostRange = lostRange == null ? one : Regions.union(lostRange, one);
        } else if (value != null) {
          sink.entry(keyspace, key, value);
        }
      }
    } finally {
      for (Scan s : scans) {
        s.collect(damaged, keyspace);
        s.scan.close();
      }
    }
    if (lost > 0) {
      regions.add(
          new Region(
              blame,
              -1,
              -1,
              keyspace,
              lost,
              lostRange,
              "without an intact MANIFEST the order of the table files is unknown: keys whose"
                  + " visible versions disagree, or that a table holding deletions or a damaged"
                  + " block may have deleted or changed, are lost"));
    }
  }

  /** Marker for a key whose newest version cannot be told. */
  private static final class Ambiguous {
    static final byte[] VALUE = new byte[0];
  }

  /**
   * The key's value if every visible version agrees, null if it is deleted, {@link Ambiguous#VALUE}
   * if it cannot be told.
   */
  private static byte[] agreed(
      byte[] key,
      List<Table> tables,
      List<Scan> holders,
      List<byte[]> values,
      Ops ops,
      List<KeyRange> damaged) {
    for (KeyRange r : damaged) {
      if (r.contains(key)) {
        return Ambiguous.VALUE;
      }
    }
    for (Table t : tables) {
      if (t.deletes && holders.stream().noneMatch(h -> h.table == t)) {
        return Ambiguous.VALUE;
      }
    }
    if (values.isEmpty()) {
      if (ops == null) {
        return null;
      }
      return ops.delete ? null : ops.value;
    }
    byte[] v = values.get(0);
    for (byte[] other : values) {
      if (!Arrays.equals(other, v)) {
        return Ambiguous.VALUE;
      }
    }
    if (ops != null && (!ops.uniform || ops.delete || !Arrays.equals(ops.value, v))) {
      return Ambiguous.VALUE;
    }
    return v;
  }

  /** One table's scan, and how many of its losses were turned into regions. */
  private final class Scan {
    final Table table;
    final TableScan scan;
    int collected;

    Scan(Table table, TableScan scan) {
      this.table = table;
      this.scan = scan;
    }

    void collect(List<KeyRange> damaged, String keyspace) {
      List<TableScan.Loss> losses = scan.losses();
      for (; collected < losses.size(); collected++) {
        TableScan.Loss l = losses.get(collected);
        KeyRange r = KeyRange.all();
        if (l.before() != null) {
          r = r.gt(l.before());
        }
        if (l.after() != null) {
          r = r.lt(l.after());
        }
        damaged.add(r);
        regions.add(
            new Region(
                source(table.name),
                l.offset(),
                l.length(),
                keyspace,
                -1,
                r,
                l.problem() + " (a data block of a table file: its keys are lost)"));
      }
    }
  }

  // ------------------------------------------------------------------ WALs

  /** Every intact write batch of every WAL, by column family id and key. */
  private void readWals(Map<Integer, TreeMap<byte[], Ops>> out) throws IOException {
    for (Path wal : RecordLog.walFiles(copy)) {
      LogSurvey s =
          LogSurvey.read(
              wal,
              true,
              (offset, type, payload) -> {
                if (type == 1) {
                  WalBatch.read(
                      payload,
                      (cf, seq, key, value) ->
                          out.computeIfAbsent(cf, c -> new TreeMap<>(Arrays::compareUnsigned))
                              .computeIfAbsent(key, k -> new Ops())
                              .add(seq, value == null, value));
                }
              });
      if (s.compressed()) {
        throw new IllegalArgumentException(wal.getFileName() + " is compressed");
      }
    }
  }
}
