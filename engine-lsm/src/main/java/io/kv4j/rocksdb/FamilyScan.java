package io.kv4j.rocksdb;

import io.kv4j.KeyRange;
import io.kv4j.spi.SalvageSink;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.TreeMap;
import java.util.function.Function;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.LiveFileMetaData;
import org.rocksdb.ReadOptions;
import org.rocksdb.ReadTier;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;

/**
 * One column family of a salvage's copy ({@link Salvage}): merge the sources' keys, look each up
 * through the database.
 */
final class FamilyScan {
  private final Path copy;
  private final Regions regions;
  private final SalvageSink sink;

  /** Keys damaged WAL spans appear to have written, by column family id ({@link LogDamage}). */
  private final Map<Integer, Map<ByteBuffer, long[]>> suspects;

  /** The store's file a file of the copy came from, by name. */
  private final Function<String, Path> source;

  private final CopiedDatabase db;
  private final ColumnFamilyHandle handle;
  private final String keyspace;
  private final List<LiveFileMetaData> tables;
  private final List<DeadTable> dead;

  FamilyScan(
      Salvage salvage,
      CopiedDatabase db,
      ColumnFamilyHandle handle,
      String keyspace,
      List<LiveFileMetaData> tables,
      List<DeadTable> dead) {
    this.copy = salvage.copy;
    this.regions = salvage.regions;
    this.sink = salvage.sink;
    this.suspects = salvage.logs.suspects;
    this.source = salvage::source;
    this.db = db;
    this.handle = handle;
    this.keyspace = keyspace;
    this.tables = tables;
    this.dead = dead;
  }

  void run() {
    List<Source> sources = new ArrayList<>();
    TreeMap<Integer, List<LiveFileMetaData>> levels = new TreeMap<>();
    for (LiveFileMetaData m : tables) {
      if (dead.stream().anyMatch(d -> d.meta == m || d.name.equals(Salvage.fileName(m)))) {
        continue;
      }
      if (m.level() == 0) {
        sources.add(new TableSource(List.of(m)));
      } else {
        levels.computeIfAbsent(m.level(), l -> new ArrayList<>()).add(m);
      }
    }
    for (List<LiveFileMetaData> level : levels.values()) {
      level.sort((a, b) -> Arrays.compareUnsigned(a.smallestKey(), b.smallestKey()));
      sources.add(new TableSource(level));
    }
    try (ReadOptions memOnly = new ReadOptions().setReadTier(ReadTier.MEMTABLE_TIER);
        RocksIterator mem = db.db.newIterator(handle, memOnly);
        ReadOptions checked = new ReadOptions().setVerifyChecksums(true).setFillCache(false)) {
      sources.add(new MemSource(mem));
      PriorityQueue<Source> queue =
          new PriorityQueue<>((a, b) -> Arrays.compareUnsigned(a.key(), b.key()));
      try {
        for (Source s : sources) {
          if (s.start()) {
            queue.add(s);
          }
        }
        while (!queue.isEmpty()) {
          Source s = queue.poll();
          byte[] key = s.key();
          long newest = s.sequence();
          if (s.advance()) {
            queue.add(s);
          }
          while (!queue.isEmpty() && Arrays.equals(queue.peek().key(), key)) {
            Source t = queue.poll();
            newest = Math.max(newest, t.sequence());
            if (t.advance()) {
              queue.add(t);
            }
          }
          resolve(checked, key, newest);
        }
      } finally {
        for (Source s : sources) {
          s.close();
        }
      }
    }
  }

  /**
   * Looks a key up through the database, unless a dead file may hold its newest version or a
   * damaged WAL span probably did.
   */
  private void resolve(ReadOptions checked, byte[] key, long newest) {
    Map<ByteBuffer, long[]> lostInWal = suspects.get(handle.getID());
    if (lostInWal != null && lostInWal.containsKey(ByteBuffer.wrap(key))) {
      return; // lost: counted by the WAL's region
    }
    for (DeadTable d : dead) {
      if (d.covers(key) && newest <= d.meta.largestSeqno()) {
        return; // lost: within the dead file's reported range
      }
    }
    byte[] value;
    try {
      value = db.db.get(handle, checked, key);
    } catch (RocksDBException e) {
      regions.lostAt(copy, e, key, keyspace, source);
      return;
    }
    if (value != null) {
      sink.entry(keyspace, key, value);
    }
  }

  /** The tables of one level (in key order), or one level-0 table, read past damage. */
  private final class TableSource implements Source {
    private final List<LiveFileMetaData> files;
    private int next;
    private TableScan scan;
    private LiveFileMetaData current;

    /** How many of the current scan's losses are registered: each as soon as it is found. */
    private int registered;

    TableSource(List<LiveFileMetaData> files) {
      this.files = files;
    }

    @Override
    public boolean start() {
      return openNext();
    }

    private boolean openNext() {
      while (next < files.size()) {
        current = files.get(next++);
        String name = Salvage.fileName(current);
        try {
          scan = TableScan.open(copy.resolve(name));
        } catch (RocksDBException e) {
          // Opened a moment ago; failing now is as dead as failing then, but without a
          // stand-in: its lookups fail and count as lost.
          regions.add(
              new DeadTable(name, current, String.valueOf(e.getMessage()))
                  .region(source.apply(name), keyspace));
          continue;
        }
        registered = 0;
        scan.seekToFirst();
        register();
        if (scan.valid()) {
          return true;
        }
        finish();
      }
      return false;
    }

    /** Registers the losses the scan found since the last call, before any lookup lands there. */
    private void register() {
      List<TableScan.Loss> losses = scan.losses();
      for (; registered < losses.size(); registered++) {
        TableScan.Loss l = losses.get(registered);
        KeyRange r = KeyRange.all();
        if (l.before() != null) {
          r = r.gt(l.before());
        }
        if (l.after() != null) {
          r = r.lt(l.after());
        }
        regions.add(
            new Region(
                source.apply(Salvage.fileName(current)),
                l.offset(),
                l.length(),
                keyspace,
                -1,
                r,
                l.problem()
                    + " (a data block of a table file: its keys, in the range between the intact"
                    + " keys on either side, are lost)"));
      }
    }

    private void finish() {
      register();
      String meta = scan.verifyChecksum();
      if (meta != null) {
        long[] at = TableScan.blockAt(meta);
        if (scan.losses().stream().noneMatch(l -> l.offset() == at[0])) {
          regions.add(
              new Region(
                  source.apply(Salvage.fileName(current)),
                  at[0],
                  at[1],
                  keyspace,
                  0,
                  null,
                  meta + " (a block of a table file that holds no entry: nothing lost)"));
        }
      }
      scan.close();
      scan = null;
    }

    @Override
    public byte[] key() {
      return scan.key();
    }

    @Override
    public long sequence() {
      return current.smallestSeqno();
    }

    @Override
    public boolean advance() {
      scan.next();
      register();
      if (scan.valid()) {
        return true;
      }
      finish();
      return openNext();
    }

    @Override
    public void close() {
      if (scan != null) {
        finish();
      }
    }
  }

  /** Keys in ascending order from one place of a column family. */
  private interface Source extends AutoCloseable {
    /** Positions at the first key; false if there is none. */
    boolean start();

    byte[] key();

    /** A sequence number below every entry of the current key's place (the memtable: max). */
    long sequence();

    /** Moves to the next key; false at the end. */
    boolean advance();

    @Override
    void close();
  }

  /** The memtable, replayed from the WALs: newer than every table file. */
  private static final class MemSource implements Source {
    private final RocksIterator it;

    MemSource(RocksIterator it) {
      this.it = it;
    }

    @Override
    public boolean start() {
      it.seekToFirst();
      return it.isValid();
    }

    @Override
    public byte[] key() {
      return it.key();
    }

    @Override
    public long sequence() {
      return Long.MAX_VALUE;
    }

    @Override
    public boolean advance() {
      it.next();
      return it.isValid();
    }

    @Override
    public void close() {
      // the iterator belongs to the caller
    }
  }
}
