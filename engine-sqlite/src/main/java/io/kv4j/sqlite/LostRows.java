package io.kv4j.sqlite;

import io.kv4j.spi.SalvageSink;
import io.kv4j.sqlite.StoreTables.Target;
import io.kv4j.sqlite.TreeWalk.Loss;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What salvage lost, and what of it can be found elsewhere: a store table's key index (a tree of
 * its own) names exactly the keys whose rows were not read in a damaged part of the table, and
 * those rows are looked for on pages no intact reference reads. A row found there is handed to the
 * sink only when its rowid and key are the ones exactly one table's index lists as lost and its
 * checksum passes; each {@link Loss} keeps its lost keys and how many of its rows were found.
 */
final class LostRows {
  private final DatabaseCopy db;
  private final PageOwners owners;
  private final TreeWalk trees;
  private final SalvageSink sink;

  /** The keys the key indexes list as lost, by rowid (two tables' may share a rowid). */
  private final Map<Long, List<Lost>> lostByRowid = new HashMap<>();

  /** A key the index lists whose row was not read. */
  private record Lost(Target target, Loss loss, byte[] key) {}

  LostRows(DatabaseCopy db, PageOwners owners, TreeWalk trees, SalvageSink sink) {
    this.db = db;
    this.owners = owners;
    this.trees = trees;
    this.sink = sink;
  }

  /**
   * Reads a table's key index and attributes every key whose rowid lies in a loss of the table and
   * whose row was not read to that loss.
   */
  void readIndex(Target t) throws IOException {
    if (t.indexRoot <= 0) {
      return;
    }
    List<Loss> indexLosses = new ArrayList<>();
    List<Loss> sorted = new ArrayList<>(t.losses);
    sorted.sort(Comparator.comparing(l -> l.lo == null ? Long.MIN_VALUE : l.lo));
    trees.walk(
        t.indexRoot,
        PageOwners.rootClaim(t.indexTree),
        false,
        true,
        indexLosses,
        (rowid, r, problems, where) -> {
          int last = r.columns() - 1;
          if (last < 1 || !r.isBytes(0) || !r.isInteger(last)) {
            problems.add(where + ": not a key index entry");
            return null;
          }
          long id = r.integer(last);
          for (Loss l : sorted) {
            if (l.holds(id)) {
              byte[] key = r.bytes(0);
              if (!l.read.contains(ByteBuffer.wrap(key))) {
                l.lostKeys.add(key);
                lostByRowid.computeIfAbsent(id, x -> new ArrayList<>()).add(new Lost(t, l, key));
              }
              break;
            }
          }
          return new byte[] {1};
        },
        null);
    t.indexComplete = indexLosses.isEmpty();
  }

  /**
   * Looks for the rows the key indexes say are lost on pages no intact reference reads: pages no
   * tree names (only while the free list is intact) and the store tables' damaged pages, read
   * leniently. A row is taken only if its rowid and key are what exactly one table's index lists as
   * lost, and its checksum passes; two different rows for one lost key take neither.
   */
  void recover() throws IOException {
    if (lostByRowid.isEmpty()) {
      return;
    }
    Map<Long, Boolean> pages = new LinkedHashMap<>();
    for (long p : trees.lenient()) {
      pages.put(p, true);
    }
    if (owners.orphansReadable()) {
      for (long p : owners.unread()) {
        if (!pages.containsKey(p) && owners.type(p) == BTreePage.TABLE_LEAF) {
          pages.put(p, false);
        }
      }
    }
    Map<Lost, byte[]> found = new LinkedHashMap<>();
    Set<Lost> ambiguous = new HashSet<>();
    for (Map.Entry<Long, Boolean> e : pages.entrySet()) {
      long p = e.getKey();
      BTreePage page =
          BTreePage.parse(
              p, db.read(p), db.usable, e.getValue() ? BTreePage.TABLE_LEAF : 0, e.getValue());
      if (page.broken || page.type != BTreePage.TABLE_LEAF) {
        continue;
      }
      for (BTreePage.Cell c : page.cells) {
        List<Lost> candidates = lostByRowid.get(c.rowid());
        if (candidates == null) {
          continue;
        }
        byte[] payload = trees.payload(page, c, new ArrayList<>(), "");
        Record r = payload == null ? null : Record.decode(payload);
        if (r == null) {
          continue;
        }
        List<Lost> matches = new ArrayList<>();
        for (Lost lost : candidates) {
          TableShape s = lost.target().shape;
          int k = s.position("k");
          int v = s.position("v");
          int crc = s.position(RowChecksum.COLUMN);
          if (r.isBytes(k)
              && r.bytesEqual(k, lost.key())
              && r.bytes(k).length == lost.key().length
              && Salvage.checkedKey(
                      r, k, v, crc, lost.target().shapeRead && crc >= 0, new ArrayList<>(), "")
                  != null) {
            matches.add(lost);
          }
        }
        if (matches.size() > 1) {
          ambiguous.addAll(matches);
          continue;
        }
        if (matches.size() == 1) {
          Lost lost = matches.get(0);
          byte[] value = r.bytes(lost.target().shape.position("v"));
          byte[] before = found.putIfAbsent(lost, value);
          if (before != null && !Arrays.equals(before, value)) {
            ambiguous.add(lost);
          }
        }
      }
    }
    for (Map.Entry<Lost, byte[]> e : found.entrySet()) {
      Lost lost = e.getKey();
      if (ambiguous.contains(lost)) {
        continue;
      }
      sink.entry(lost.target().keyspace, lost.key(), e.getValue());
      lost.loss().recovered++;
      lost.loss().lostKeys.remove(lost.key());
    }
  }
}
