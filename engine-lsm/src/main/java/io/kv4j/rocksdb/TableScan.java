package io.kv4j.rocksdb;

import java.math.BigInteger;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDBException;
import org.rocksdb.SstFileReader;
import org.rocksdb.SstFileReaderIterator;
import org.rocksdb.TableProperties;

/**
 * Reads one table file ({@code *.sst}) in key order past damaged data blocks: every key (and its
 * newest value in this file) held by a block whose checksum passed, and, for every block that
 * failed, a {@link Loss} naming the block and the intact keys on either side of it.
 *
 * <p>The unit of loss is a data block (4 KiB before compression by default): a block either passes
 * its checksum as a whole or is lost as a whole; the table format has no checksum per entry. A
 * damaged index, meta-index, properties block or footer makes RocksDB refuse the whole file, which
 * {@link #open} reports by throwing.
 *
 * <p><b>Stepping over a bad block.</b> A checked iterator stops at the block; reading continues at
 * the first intact key after it. First an intact key known to follow: the first key of an unchecked
 * read of the rest of the file (used only as a candidate, never returned) that a checked seek finds
 * exactly, or, if the unchecked read fails too (a compressed block that no longer decompresses),
 * the smallest key a checked backward read from the end reaches. Then the exact boundary by
 * bisection over the key space between the last intact key before the block and that key, with
 * checked seeks: a seek up to the boundary fails on the damaged block itself, one past it does not.
 * Every key handed out comes from a checked read; an inexact boundary (keys longer than the
 * bisected prefix) can only count intact keys as lost, never admit damaged ones.
 *
 * <p>No reader has a block cache: an unchecked read must never leave a block where a checked read
 * would find it without its checksum being verified (RocksDB does not check cached blocks again).
 */
final class TableScan implements AutoCloseable {
  private static final Pattern BLOCK_AT = Pattern.compile("offset (\\d+) size (\\d+)");
  private static final Pattern FOOTER_AT = Pattern.compile("Footer at (\\d+)");

  /** How many confirmations one bad block may cost before the scan falls back to bisection. */
  private static final int MAX_PROBES = 100_000;

  /** The widest prefix bisection works on: longer keys are bisected on their first bytes. */
  private static final int MAX_BISECT_WIDTH = 72;

  /**
   * A damaged block.
   *
   * @param offset its offset in the file, or -1 if RocksDB did not say
   * @param length its length with its 5-byte trailer, or -1
   * @param before the last intact key before it, or null if none
   * @param after the first intact key after it, or null if none (the rest of the file is lost)
   * @param problem RocksDB's description
   */
  record Loss(long offset, long length, byte[] before, byte[] after, String problem) {}

  private final Path file;
  private final Options options;
  private final SstFileReader checked;
  private final ReadOptions verify;

  /**
   * The checked iterators: the scan's and the one that confirms keys. Each is replaced by a fresh
   * one after a read fails: RocksDB 11.8.1 keeps a table iterator's error after some failed seeks
   * and reports it again for a later seek to an intact block (seen: a seek that moved from an
   * intact block onto a damaged one, then a seek to a key three blocks further failed the same
   * way).
   */
  private SstFileReaderIterator it;

  private SstFileReaderIterator probe;
  private final List<Loss> losses = new ArrayList<>();

  /** The last key handed out, or null. */
  private byte[] last;

  private boolean valid;

  /**
   * The backward read from the end, once made: the smallest key it reached, and where it stopped.
   */
  private boolean tailRead;

  private byte[] tailFirst;
  private long tailStoppedAt = -2;

  private TableScan(Path file, Options options, SstFileReader checked, ReadOptions verify) {
    this.file = file;
    this.options = options;
    this.checked = checked;
    this.verify = verify;
    this.it = checked.newIterator(verify);
    this.probe = checked.newIterator(verify);
  }

  /**
   * Opens a table file: its footer, meta-index, index and properties, each checked.
   *
   * @param file the file
   * @return the scan, not yet positioned ({@link #seekToFirst()})
   * @throws RocksDBException if RocksDB cannot open it (missing, cut short, a damaged meta block)
   */
  static TableScan open(Path file) throws RocksDBException {
    Options options = readerOptions();
    SstFileReader r = new SstFileReader(options);
    ReadOptions verify = new ReadOptions().setVerifyChecksums(true).setFillCache(false);
    try {
      r.open(file.toString());
      return new TableScan(file, options, r, verify);
    } catch (RocksDBException | RuntimeException e) {
      verify.close();
      r.close();
      options.close();
      throw e;
    }
  }

  /** Options for a reader of any block-based table: no block cache, no filter. */
  static Options readerOptions() {
    return new Options().setTableFormatConfig(new BlockBasedTableConfig().setNoBlockCache(true));
  }

  /** The file's table properties (read and checked at open). */
  TableProperties properties() throws RocksDBException {
    return checked.getTableProperties();
  }

  /** Positions the scan at the first intact key. */
  void seekToFirst() {
    it.seekToFirst();
    settle();
  }

  boolean valid() {
    return valid;
  }

  /** The current key. */
  byte[] key() {
    return it.key();
  }

  /** The current key's newest value in this file (a checked read). */
  byte[] value() {
    return it.value();
  }

  void next() {
    last = it.key();
    it.next();
    settle();
  }

  /** Every damaged block passed so far, in file order. */
  List<Loss> losses() {
    return losses;
  }

  /** After a move: at a key, at the end, or past one damaged block after another. */
  private void settle() {
    long previous = -3;
    while (!it.isValid()) {
      try {
        it.status();
        valid = false;
        return;
      } catch (RocksDBException e) {
        String problem = String.valueOf(e.getMessage());
        long[] at = blockAt(problem);
        if (at[0] == previous) {
          // The first key after the block was confirmed intact, yet the read fails there again:
          // give up on the rest of the file rather than go round.
          losses.add(new Loss(at[0], at[1], last, null, problem));
          valid = false;
          return;
        }
        previous = at[0];
        it.close();
        it = checked.newIterator(verify);
        runEnd = at[0] >= 0 && at[1] >= 0 ? at[0] + at[1] : -1;
        byte[] after = firstIntactAfter(last, at[0]);
        long length = at[0] >= 0 && runEnd > at[0] ? runEnd - at[0] : at[1];
        losses.add(new Loss(at[0], length, last, after, problem));
        if (after == null) {
          valid = false;
          return;
        }
        it.seek(after);
      }
    }
    valid = true;
  }

  /**
   * The end of the run of damaged blocks being stepped over: checked seeks that fail on a later
   * block of the same run (blocks next to each other) move it on.
   */
  private long runEnd;

  /**
   * The first key after {@code from} (exclusive; null: the start) held by an intact block: an
   * intact key known to follow the damage (from the unchecked read, else from the backward read),
   * then the exact boundary after the damaged block by bisection between the two. The bisection
   * matters: an unchecked read of a damaged (above all a compressed) block can yield garbage that
   * happens to equal a later intact key, and the backward read only finds the last damaged run.
   */
  private byte[] firstIntactAfter(byte[] from, long badBlock) {
    byte[] known = probeUnchecked(from);
    if (known == null || known.length == 0) {
      readTail();
      if (tailFirst == null || !after(tailFirst, from)) {
        return null; // no intact key after the damage: the rest of the file is lost
      }
      known = tailFirst;
    }
    return bisect(from, known, badBlock);
  }

  /**
   * Walks the keys after {@code from} in an unchecked read and returns the first that a checked
   * seek finds exactly; an empty array if the unchecked read ended with no such key; null if it
   * failed. Either way it proves nothing about the keys before the one it returns.
   */
  private byte[] probeUnchecked(byte[] from) {
    try (Options o = readerOptions();
        SstFileReader r = new SstFileReader(o);
        ReadOptions noVerify = new ReadOptions().setVerifyChecksums(false).setFillCache(false)) {
      r.open(file.toString());
      try (SstFileReaderIterator u = r.newIterator(noVerify)) {
        if (from == null) {
          u.seekToFirst();
        } else {
          u.seek(from);
          if (u.isValid() && Arrays.equals(u.key(), from)) {
            u.next();
          }
        }
        for (int n = 0; u.isValid() && n < MAX_PROBES; n++) {
          byte[] k = u.key();
          if (after(k, from) && intact(k)) {
            return k;
          }
          u.next();
        }
        if (u.isValid()) {
          return null; // too many candidates: let bisection decide
        }
        u.status();
        return new byte[0];
      }
    } catch (RocksDBException e) {
      return null;
    }
  }

  /** Whether a checked seek to {@code k} finds exactly {@code k}. */
  private boolean intact(byte[] k) {
    if (seek(k)) {
      return Arrays.equals(probe.key(), k);
    }
    long[] at = failedAt;
    if (runEnd >= 0 && at[0] == runEnd && at[1] >= 0) {
      runEnd = at[0] + at[1]; // the next block of the run
    }
    return false;
  }

  /** Where the probe's last seek failed: the block, or -1s (ended without a key, no error). */
  private long[] failedAt = {-1, -1};

  /**
   * A checked seek of the probe: true if it is at a key; else {@link #failedAt} says where it
   * failed, and the probe is replaced by a fresh iterator for the next seek.
   */
  private boolean seek(byte[] k) {
    probe.seek(k);
    if (probe.isValid()) {
      return true;
    }
    try {
      probe.status();
      failedAt = new long[] {-1, -1};
    } catch (RocksDBException e) {
      failedAt = blockAt(String.valueOf(e.getMessage()));
      probe.close();
      probe = checked.newIterator(verify);
    }
    return false;
  }

  /** The checked backward read from the end, made once per file. */
  private void readTail() {
    if (tailRead) {
      return;
    }
    tailRead = true;
    try (SstFileReaderIterator b = checked.newIterator(verify)) {
      b.seekToLast();
      while (b.isValid()) {
        tailFirst = b.key();
        b.prev();
      }
    }
  }

  /**
   * Bisects the key space between {@code from} (exclusive; null: the start) and {@code known} (an
   * intact key after it) for the boundary after the damaged block {@code bad}: a checked seek to a
   * key up to that boundary fails on {@code bad} itself, one past it finds a key or fails on a
   * later block, so the predicate is monotone. At the boundary a seek finds the first intact key
   * after the block, or fails on the next damaged block of a run, which is then stepped over the
   * same way. Keys longer than the bisected prefix make the boundary approximate: a later key may
   * be returned (the keys skipped count as lost), never an earlier one.
   */
  private byte[] bisect(byte[] from, byte[] known, long bad) {
    byte[] lower = from == null ? new byte[0] : from;
    for (int round = 0; round < 64; round++) {
      int width = Math.min(Math.max(lower.length, known.length) + 1, MAX_BISECT_WIDTH);
      BigInteger lo = number(lower, width);
      BigInteger hi = number(known, width);
      while (hi.subtract(lo).compareTo(BigInteger.ONE) > 0) {
        BigInteger mid = lo.add(hi).shiftRight(1);
        if (!seek(bytes(mid, width)) && failedAt[0] == bad) {
          lo = mid;
        } else {
          hi = mid;
        }
      }
      byte[] edge = bytes(hi, width);
      if (seek(edge)) {
        return after(probe.key(), from) ? probe.key() : known;
      }
      long[] next = failedAt;
      if (next[0] < 0 || next[0] == bad || Arrays.compareUnsigned(edge, known) >= 0) {
        return known; // an inexact boundary (long keys): the intact key known to follow is safe
      }
      if (runEnd >= 0 && next[0] == runEnd && next[1] >= 0) {
        runEnd = next[0] + next[1];
      }
      bad = next[0];
      lower = edge;
    }
    return known;
  }

  private static BigInteger number(byte[] key, int width) {
    return new BigInteger(1, Arrays.copyOf(key, width));
  }

  private static byte[] bytes(BigInteger n, int width) {
    byte[] raw = n.toByteArray();
    byte[] out = new byte[width];
    int take = Math.min(raw.length, width);
    System.arraycopy(raw, raw.length - take, out, width - take, take);
    return out;
  }

  /** Whether {@code k} sorts after {@code from} (null: every key does). */
  private static boolean after(byte[] k, byte[] from) {
    return from == null || Arrays.compareUnsigned(k, from) > 0;
  }

  /**
   * Where a RocksDB error puts the damage: {@code [offset, length]} of the block with its trailer,
   * or the footer's offset, or -1s.
   */
  static long[] blockAt(String message) {
    Matcher m = BLOCK_AT.matcher(message);
    if (m.find()) {
      return new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2)) + 5};
    }
    Matcher f = FOOTER_AT.matcher(message);
    if (f.find()) {
      return new long[] {Long.parseLong(f.group(1)), -1};
    }
    return new long[] {-1, -1};
  }

  /**
   * Checks every block of the file, meta blocks included (a damaged filter block fails no read of
   * entries).
   *
   * @return RocksDB's description of the first bad block, or null if every block passes
   */
  String verifyChecksum() {
    try {
      checked.verifyChecksum();
      return null;
    } catch (RocksDBException e) {
      return String.valueOf(e.getMessage());
    }
  }

  @Override
  public void close() {
    probe.close();
    it.close();
    verify.close();
    checked.close();
    options.close();
  }
}
