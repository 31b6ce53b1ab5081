package io.kv4j.rocksdb;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Reads a file in RocksDB's record log format (a WAL or a MANIFEST; the format is in {@link
 * RecordLog}) past damage instead of stopping at it: every intact logical record, and every damaged
 * span between them. {@link RecordLog} decides whether a file may be opened; this class serves
 * salvage and {@code verify()}, which must report every damaged span and keep every intact record.
 *
 * <p><b>How it steps over damage.</b> A record whose checksum fails, whose length runs past its
 * block, whose type is unknown, or a zeroed header with data after it, starts a damaged span. The
 * reader resumes at the first intact record after it: at the end the damaged record declares (its
 * length is intact when the damage hit its payload); else, when the length itself may be damaged,
 * at the first place further in the 32 KiB block where an intact record begins a logical record
 * (its checksum over its whole length must match, and in a WAL its sequence number must not go
 * back); else at the start of the next block (records never cross block boundaries, so a block
 * always begins with a record). Fragments of a logical record whose other fragments were damaged
 * belong to the damaged span. The span ends at the next record that begins a logical record.
 *
 * <p><b>What is not damage</b>, as in {@link RecordLog}: what a crash leaves at the end of the file
 * (a header or record cut off by the end with nothing intact after it, a logical record without its
 * last fragment at the end, zeros to the end). Such a torn tail is reported by {@link #tornAt()}. A
 * record whose length runs past the end while intact records follow it is damage: a flipped bit in
 * a length field, which would otherwise pass for a torn tail and silently end the log there.
 *
 * <p><b>What a span cost</b>, for a WAL: the sequence numbers between the last intact write batch
 * before it and the first one after it (each operation of a batch has its own sequence number), so
 * {@link Span#lostOperations()} is exact when intact batches surround the span, and -1 otherwise
 * (at the end of the file, or in a WAL whose records are compressed). The span's records as they
 * are, checksums failed ({@link Span#unverified()}), are kept too: never to be applied, only to
 * tell which keys the lost writes probably touched.
 */
final class LogSurvey {
  private static final int BLOCK = RecordLog.BLOCK;
  private static final int HEADER = 7;
  private static final int RECYCLABLE_HEADER = 11;

  /**
   * One damaged span.
   *
   * @param offset its first byte
   * @param length its length in bytes
   * @param lostOperations write operations (sequence numbers) it held, or -1 if unknown
   * @param problem what was wrong at its start
   * @param unverified the logical records of the span assembled from their fragments as they are
   *     (checksums failed or fragments missing): hints at what was lost, never data
   */
  record Span(
      long offset, long length, long lostOperations, String problem, List<byte[]> unverified) {}

  /** Receives the intact logical records in file order. */
  @FunctionalInterface
  interface Records {
    /**
     * One intact logical record.
     *
     * @param offset where its first fragment starts
     * @param type its physical type for records that are not user records (9 and above), or 1 for a
     *     user record (a write batch in a WAL, a version edit in a MANIFEST), whole
     * @param payload its bytes
     */
    void record(long offset, int type, byte[] payload) throws IOException;
  }

  private final List<Span> damage;
  private final long tornAt;
  private final boolean compressed;
  private final long records;

  private LogSurvey(List<Span> damage, long tornAt, boolean compressed, long records) {
    this.damage = damage;
    this.tornAt = tornAt;
    this.compressed = compressed;
    this.records = records;
  }

  /** Every damaged span, in file order; empty if the file has none. */
  List<Span> damage() {
    return damage;
  }

  /** Where a torn tail (what a crash leaves) begins, or -1 if the file ends cleanly. */
  long tornAt() {
    return tornAt;
  }

  /** How many intact logical user records the file holds. */
  long records() {
    return records;
  }

  /**
   * Whether the WAL's records are compressed ({@code wal_compression}): compressed records form one
   * stream, so they cannot be rewritten without the damaged ones.
   */
  boolean compressed() {
    return compressed;
  }

  /**
   * Reads a file.
   *
   * @param file the WAL or MANIFEST
   * @param wal whether its user records are write batches (for sequence numbers)
   * @param out receives every intact logical record, or null
   * @throws IOException if the file cannot be read (or {@code out} fails)
   */
  static LogSurvey read(Path file, boolean wal, Records out) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      return new Reader(wal, out).run(ch);
    }
  }

  /**
   * Rewrites a WAL as its intact logical records alone, in order, framed afresh: what RocksDB
   * replays from it is then exactly what this survey kept, rather than what its own reader keeps
   * (which drops the rest of a 32 KiB block after a bad record). Written to a temporary file beside
   * it, then moved over it. Only for files in a salvage's copy.
   *
   * @param file the WAL, in the copy
   * @throws IOException if it cannot be read or written
   */
  static void rewrite(Path file) throws IOException {
    Path tmp = file.resolveSibling(file.getFileName() + ".rewrite");
    try (OutputStream os = Files.newOutputStream(tmp)) {
      Framer f = new Framer(os);
      read(file, true, f::record);
      f.finish();
    }
    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
  }

  /** One pass over one file. */
  private static final class Reader {
    private final boolean wal;
    private final Records out;
    private final CRC32C crc = new CRC32C();
    private final byte[] block = new byte[BLOCK];
    private final List<Span> damage = new ArrayList<>();

    /** The open damaged span: its start and problem, or -1. */
    private long spanAt = -1;

    private String spanWhy;

    /** First zeroed header after the last intact record (preallocated space or damage), or -1. */
    private long zeroAt = -1;

    /** The logical record being assembled from fragments, or null. */
    private ByteArrayBuilder fragments;

    private long fragmentAt;

    /** Where the open span ends: the start of the record that began the last logical record. */
    private long pendingEnd = -1;

    /** One past the last sequence number of the last intact write batch, or -1. */
    private long nextSequence = -1;

    private boolean compressed;
    private long records;

    Reader(boolean wal, Records out) {
      this.wal = wal;
      this.out = out;
    }

    LogSurvey run(FileChannel ch) throws IOException {
      long size = ch.size();
      long torn = -1;
      for (long base = 0; base < size && torn < 0; base += BLOCK) {
        int n = (int) Math.min(BLOCK, size - base);
        ByteBuffer buf = ByteBuffer.wrap(block, 0, n);
        while (buf.hasRemaining()) {
          if (ch.read(buf, base + buf.position()) < 0) {
            throw new IOException("file shrank while it was read");
          }
        }
        torn = block(base, n, n == BLOCK);
      }
      if (torn < 0 && fragments != null) {
        torn = fragmentAt; // a logical record without its last fragment at the end: torn
      }
      if (spanAt >= 0) {
        long end = torn >= 0 ? torn : size;
        if (torn >= 0 && torn < spanAt) {
          end = spanAt; // cannot happen: a torn tail is found only after the last damage
        }
        damage.add(new Span(spanAt, end - spanAt, -1, spanWhy, unverified()));
      }
      if (torn < 0 && zeroAt >= 0) {
        torn = zeroAt; // zeros to the end: preallocated space
      }
      return new LogSurvey(List.copyOf(damage), torn, compressed, records);
    }

    /** Reads one block; returns where a torn tail begins if this (last) block ends in one. */
    private long block(long base, int n, boolean full) throws IOException {
      int pos = 0;
      while (pos < n) {
        int left = n - pos;
        if (left < HEADER) {
          if (!zeros(pos, n)) {
            if (!full) {
              return tornAt(base + pos);
            }
            damaged(base + pos, "non-zero bytes in a block trailer");
          }
          return -1;
        }
        int type = block[pos + 6] & 0xFF;
        int length = (block[pos + 4] & 0xFF) | (block[pos + 5] & 0xFF) << 8;
        if (type == 0 && length == 0 && zeros(pos, pos + HEADER)) {
          if (zeros(pos, n)) {
            if (zeroAt < 0 && spanAt < 0) {
              zeroAt = base + pos; // preallocated space, unless an intact record follows
            }
            return -1;
          }
          damaged(base + pos, "zeroed record header followed by non-zero data");
          pos = resync(pos + 1, n);
          if (pos < 0) {
            return -1;
          }
          continue;
        }
        int header = recyclable(type) ? RECYCLABLE_HEADER : HEADER;
        if (left < header || header + length > left) {
          int next = resync(pos + 1, n);
          if (!full && next < 0) {
            return tornAt(base + pos); // what a crash leaves: nothing intact after it
          }
          damaged(
              base + pos,
              "record length "
                  + length
                  + (full
                      ? " runs past its block"
                      : " runs past the end, yet intact records follow"));
          if (left >= header) {
            // The record's bytes up to where reading resumes: a hint of the keys it held.
            unverified(type, pos + header, (next < 0 ? n : next) - pos - header);
          }
          if (next < 0) {
            return -1;
          }
          pos = next;
          continue;
        }
        if (!intact(pos, header, length)) {
          damaged(base + pos, "record checksum mismatch");
          unverified(type, pos + header, length);
          int next = pos + header + length;
          if (next + HEADER <= n && startsIntactRecord(next, n)) {
            pos = next; // the damage hit the payload: the declared length still holds
            continue;
          }
          pos = resync(pos + 1, n); // the damage hit the length
          if (pos < 0) {
            return -1;
          }
          continue;
        }
        if (!known(type)) {
          damaged(base + pos, "unknown record type " + type);
          pos += header + length;
          continue;
        }
        physical(base + pos, type, pos + header, length);
        pos += header + length;
      }
      return -1;
    }

    /**
     * The first place from {@code from} on in this block where an intact record starts that begins
     * a logical record (or is a meta record), with, in a WAL, a sequence number not below the next
     * one expected; -1 if none. Used where a damaged length leaves no other way to find the next
     * record: its checksum over its whole length makes a chance match about 1 in 2^32 per place,
     * though a value that itself holds a whole WAL record could match (a risk taken only here).
     */
    private int resync(int from, int n) {
      for (int q = from; q + HEADER <= n; q++) {
        int type = block[q + 6] & 0xFF;
        boolean starts = type == 1 || type == 2 || type == 5 || type == 6;
        if ((starts || (type >= 9 && known(type))) && startsIntactRecord(q, n)) {
          if (!starts || !wal || nextSequence < 0) {
            return q;
          }
          int header = recyclable(type) ? RECYCLABLE_HEADER : HEADER;
          int length = (block[q + 4] & 0xFF) | (block[q + 5] & 0xFF) << 8;
          if (length >= 8
              && ByteBuffer.wrap(block, q + header, 8).order(ByteOrder.LITTLE_ENDIAN).getLong()
                  >= nextSequence) {
            return q;
          }
        }
      }
      return -1;
    }

    /** Whether an intact record with a plausible header starts at {@code at} in this block. */
    private boolean startsIntactRecord(int at, int n) {
      int type = block[at + 6] & 0xFF;
      int length = (block[at + 4] & 0xFF) | (block[at + 5] & 0xFF) << 8;
      int header = recyclable(type) ? RECYCLABLE_HEADER : HEADER;
      if (type == 0 || at + header + length > n) {
        return false;
      }
      return intact(at, header, length);
    }

    private boolean intact(int pos, int header, int length) {
      int stored =
          (block[pos] & 0xFF)
              | (block[pos + 1] & 0xFF) << 8
              | (block[pos + 2] & 0xFF) << 16
              | (block[pos + 3] & 0xFF) << 24;
      crc.reset();
      crc.update(block, pos + 6, header - 6 + length);
      return RecordLog.mask((int) crc.getValue()) == stored;
    }

    /** An intact physical record. */
    private void physical(long at, int type, int from, int length) throws IOException {
      switch (type) {
        case 1, 5 -> {
          begins(at);
          logical(at, Arrays.copyOfRange(block, from, from + length));
        }
        case 2, 6 -> {
          begins(at);
          fragments = new ByteArrayBuilder();
          fragmentAt = at;
          fragments.append(block, from, length);
        }
        case 3, 7, 4, 8 -> {
          if (fragments == null) {
            // The rest of a logical record whose first fragment was damaged.
            if (spanAt < 0) {
              damaged(at, "record fragment without its first fragment");
            }
            unverified(type, from, length);
            return;
          }
          fragments.append(block, from, length);
          if (type == 4 || type == 8) {
            byte[] payload = fragments.toArray();
            fragments = null;
            logical(fragmentAt, payload);
          }
        }
        default -> {
          // Meta records (compression setting, timestamp sizes, predecessor WAL info, ignorable
          // types): checksummed, kept as they are.
          begins(at);
          if (type == 9) {
            compressed |= length > 0 && block[from] != 0; // 0 is kNoCompression
          }
          if (out != null) {
            out.record(at, type, Arrays.copyOfRange(block, from, from + length));
          }
        }
      }
    }

    /** A record that begins a logical record at {@code at}: it ends any open damaged span. */
    private void begins(long at) {
      if (fragments != null) {
        damaged(fragmentAt, "fragmented record without its last fragment");
      }
      if (zeroAt >= 0) {
        if (spanAt < 0) {
          spanAt = zeroAt;
          spanWhy = "zeroed record header with intact records after it";
        }
        zeroAt = -1;
      }
      pendingEnd = at;
    }

    private void logical(long at, byte[] payload) throws IOException {
      long seq = -1;
      long count = 0;
      if (wal && !compressed && payload.length >= 12) {
        ByteBuffer b = ByteBuffer.wrap(payload).order(ByteOrder.LITTLE_ENDIAN);
        seq = b.getLong(0);
        count = Integer.toUnsignedLong(b.getInt(8));
      }
      if (spanAt >= 0) {
        long lost = seq >= 0 && nextSequence >= 0 ? Math.max(0, seq - nextSequence) : -1;
        damage.add(new Span(spanAt, pendingEnd - spanAt, lost, spanWhy, unverified()));
        spanAt = -1;
      }
      if (seq >= 0) {
        nextSequence = Math.max(nextSequence, seq + Math.max(count, 1));
      }
      records++;
      if (out != null) {
        out.record(at, 1, payload);
      }
    }

    private void damaged(long at, String why) {
      if (fragments != null) {
        at = Math.min(at, fragmentAt); // the logical record being assembled is lost with it
        flushUnverified();
        hint = fragments;
        fragments = null;
      }
      if (zeroAt >= 0) {
        at = Math.min(at, zeroAt);
        zeroAt = -1;
      }
      if (spanAt < 0) {
        spanAt = at;
        spanWhy = why;
      }
    }

    /** The span's records as they are, assembled by fragment type; kept only for a WAL. */
    private final List<byte[]> hints = new ArrayList<>();

    private ByteArrayBuilder hint;

    /** A physical record of a damaged span, intact or not: assembled into {@link #hints}. */
    private void unverified(int type, int from, int length) {
      if (!wal || from + length > block.length || length < 0) {
        return;
      }
      switch (type) {
        case 1, 5 -> {
          flushUnverified();
          hints.add(Arrays.copyOfRange(block, from, from + length));
        }
        case 2, 6 -> {
          flushUnverified();
          hint = new ByteArrayBuilder();
          hint.append(block, from, length);
        }
        case 3, 7, 4, 8 -> {
          if (hint == null) {
            hint = new ByteArrayBuilder();
          }
          hint.append(block, from, length);
          if (type == 4 || type == 8) {
            flushUnverified();
          }
        }
        default -> {
          // a damaged type byte: which record this was cannot be told
        }
      }
    }

    private void flushUnverified() {
      if (hint != null) {
        hints.add(hint.toArray());
        hint = null;
      }
    }

    private List<byte[]> unverified() {
      flushUnverified();
      List<byte[]> out = List.copyOf(hints);
      hints.clear();
      return out;
    }

    private long tornAt(long at) {
      if (zeroAt >= 0) {
        return zeroAt;
      }
      return fragments != null ? fragmentAt : at;
    }

    private boolean zeros(int from, int to) {
      for (int i = from; i < to; i++) {
        if (block[i] != 0) {
          return false;
        }
      }
      return true;
    }

    private static boolean recyclable(int type) {
      return (type >= 5 && type <= 8) || type == 11 || type == 34;
    }

    private static boolean known(int type) {
      return (type >= 1 && type <= 11) || type == 33 || type == 34 || (type & 32) != 0;
    }
  }

  /** Writes logical records in RocksDB's framing, as its log writer does (no recycling). */
  private static final class Framer {
    private final OutputStream os;
    private final CRC32C crc = new CRC32C();
    private final byte[] header = new byte[HEADER];
    private int inBlock;

    Framer(OutputStream os) {
      this.os = os;
    }

    void record(long offset, int type, byte[] payload) throws IOException {
      if (type != 1) {
        // Recyclable variants carry a log number in an 11-byte header: written without it.
        physical(type == 11 ? 10 : type == 34 ? 33 : type, payload, 0, payload.length);
        return;
      }
      int off = 0;
      boolean first = true;
      do {
        pad();
        int room = BLOCK - inBlock - HEADER;
        int n = Math.min(room, payload.length - off);
        boolean last = off + n == payload.length;
        int t = first && last ? 1 : first ? 2 : last ? 4 : 3;
        physical(t, payload, off, n);
        off += n;
        first = false;
      } while (off < payload.length);
    }

    /** Starts a new block when fewer than a header's bytes are left in this one. */
    private void pad() throws IOException {
      if (BLOCK - inBlock < HEADER) {
        os.write(new byte[BLOCK - inBlock]);
        inBlock = 0;
      }
    }

    private void physical(int type, byte[] payload, int off, int n) throws IOException {
      pad();
      crc.reset();
      crc.update(type);
      crc.update(payload, off, n);
      int c = RecordLog.mask((int) crc.getValue());
      header[0] = (byte) c;
      header[1] = (byte) (c >>> 8);
      header[2] = (byte) (c >>> 16);
      header[3] = (byte) (c >>> 24);
      header[4] = (byte) n;
      header[5] = (byte) (n >>> 8);
      header[6] = (byte) type;
      os.write(header);
      os.write(payload, off, n);
      inBlock += HEADER + n;
    }

    void finish() throws IOException {
      os.flush();
    }
  }

  /** A growable byte array for fragmented records. */
  private static final class ByteArrayBuilder {
    private byte[] bytes = new byte[BLOCK];
    private int size;

    void append(byte[] from, int off, int n) {
      if (size + n > bytes.length) {
        bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, size + n));
      }
      System.arraycopy(from, off, bytes, size, n);
      size += n;
    }

    byte[] toArray() {
      return Arrays.copyOf(bytes, size);
    }
  }
}
