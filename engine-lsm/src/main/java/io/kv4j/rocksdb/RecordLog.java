package io.kv4j.rocksdb;

import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

/**
 * Checks a file in RocksDB's record log format — the write-ahead log ({@code *.log}) and the {@code
 * MANIFEST} — record by record, because RocksDB has no public call that verifies a WAL and its own
 * reader skips some damage silently (an all-zero record header makes it drop the rest of its 32 KiB
 * block without a report, taking it for preallocated space).
 *
 * <p><b>Format</b> (RocksDB {@code db/log_format.h}, inherited from LevelDB). The file is a
 * sequence of 32,768-byte blocks; the last may be partial. A block holds physical records; fewer
 * than 7 bytes left at a block's end are a trailer of zeros. A physical record:
 *
 * <table>
 *   <caption>physical record header, little-endian</caption>
 *   <tr><th>offset</th><th>width</th><th>field</th></tr>
 *   <tr><td>0</td><td>4</td><td>masked CRC32C of the bytes from offset 6 (type, log number if
 *       any, payload): {@code ((crc >>> 15) | (crc << 17)) + 0xa282ead8}</td></tr>
 *   <tr><td>4</td><td>2</td><td>payload length; the payload never crosses a block end</td></tr>
 *   <tr><td>6</td><td>1</td><td>type: 0 zero (preallocated space), 1 full, 2 first, 3 middle,
 *       4 last fragment of a logical record; 5..8 the same for recycled logs; 9 compression
 *       setting; 10/11 timestamp sizes; 33/34 predecessor WAL info; other types with bit 5 (32)
 *       set may be ignored by readers</td></tr>
 *   <tr><td>7</td><td>4</td><td>log number, only for the recyclable types 5..8, 11 and 34</td></tr>
 *   <tr><td>7 or 11</td><td>length</td><td>payload</td></tr>
 * </table>
 *
 * <p>In a WAL each logical record (a full record, or first+middle..+last fragments joined) is a
 * RocksDB {@code WriteBatch}: its first 8 bytes are the sequence number of its first operation
 * (little-endian), the next 4 the number of operations, so the batch covers sequence numbers {@code
 * seq .. seq+count-1}. A MANIFEST's logical records are version edits (not parsed here).
 *
 * <p><b>What counts as damage.</b> A record whose checksum fails while its length fits in the file,
 * a length that runs past a full block, or past the end of the file with an intact record after it
 * in the block (a flipped bit in a length field), an unknown type, fragments out of order, non-zero
 * bytes after a zeroed header, or any valid record after a bad spot: none of these is made by a
 * crash, which only cuts a file short. They throw {@link StoreCorruptedException} naming file and
 * offset. What a crash can leave — a header or record cut off by the end of the file, a logical
 * record whose last fragment is missing, zeros to the end — is reported as a torn tail ({@link
 * Scan#tornAt()}); the caller decides whether a torn tail is allowed there.
 */
final class RecordLog {
  static final int BLOCK = 32_768;
  private static final int HEADER = 7;
  private static final int RECYCLABLE_HEADER = 11;
  private static final int MASK_DELTA = 0xa282ead8;

  private RecordLog() {}

  /**
   * What a check found besides damage, which it throws.
   *
   * @param tornAt offset of a torn tail (what a crash may leave), or -1 if the file ends cleanly
   * @param tornWhy what the torn tail looks like, or null
   * @param lastSequence the last sequence number of the last whole WAL write batch, or -1 if none
   *     (or unknown: compressed WAL records, or a MANIFEST)
   * @param validEnd the offset just past the last valid record
   */
  record Scan(long tornAt, String tornWhy, long lastSequence, long validEnd) {
    /** Whether the file ends with a torn tail. */
    boolean torn() {
      return tornAt >= 0;
    }
  }

  /**
   * Checks every record of a log file.
   *
   * @param file a WAL or MANIFEST file
   * @param wal whether the file is a WAL, whose records are write batches
   * @return what the file ends with
   * @throws StoreCorruptedException for damage a crash cannot make
   * @throws IOException if the file cannot be read (including {@link
   *     java.nio.file.NoSuchFileException})
   */
  static Scan check(Path file, boolean wal) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      return new Walker(file, wal).run(ch);
    }
  }

  static int mask(int crc) {
    return ((crc >>> 15) | (crc << 17)) + MASK_DELTA;
  }

  /** One pass over one file. */
  private static final class Walker {
    private final Path file;
    private final boolean wal;
    private final CRC32C crc = new CRC32C();
    private final byte[] block = new byte[BLOCK];

    /** First zeroed header seen (a torn tail if nothing valid follows), or -1. */
    private long zeroAt = -1;

    private boolean inFragment;
    private long fragmentAt = -1;

    /** The first 12 bytes of the logical record being assembled (WAL batch header). */
    private final byte[] head = new byte[12];

    private int headLength;
    private boolean compressed;
    private long lastSequence = -1;
    private long validEnd;

    Walker(Path file, boolean wal) {
      this.file = file;
      this.wal = wal;
    }

    Scan run(FileChannel ch) throws IOException {
      long size = ch.size();
      for (long base = 0; base < size; base += BLOCK) {
        int n = (int) Math.min(BLOCK, size - base);
        ByteBuffer buf = ByteBuffer.wrap(block, 0, n);
        while (buf.hasRemaining()) {
          if (ch.read(buf, base + buf.position()) < 0) {
            throw new IOException(file + " shrank while it was read");
          }
        }
        Scan torn = block(base, n, n == BLOCK);
        if (torn != null) {
          return torn;
        }
      }
      if (zeroAt >= 0) {
        return new Scan(zeroAt, "zeroed record header, zeros to the end", lastSequence, validEnd);
      }
      if (inFragment) {
        return new Scan(fragmentAt, "record without its last fragment", lastSequence, validEnd);
      }
      return new Scan(-1, null, lastSequence, validEnd);
    }

    /** Checks one block; returns a torn tail found in the last block, else null. */
    private Scan block(long base, int n, boolean full) {
      int pos = 0;
      while (pos < n) {
        int left = n - pos;
        if (left < HEADER) {
          if (!zeros(pos, n)) {
            if (!full) {
              return tail(base + pos, "record header cut off by the end of the file");
            }
            throw damage(base + pos, "non-zero bytes in a block trailer");
          }
          return null; // a trailer (or a zero-filled short tail): nothing more in this block
        }
        int type = block[pos + 6] & 0xFF;
        int length = (block[pos + 4] & 0xFF) | (block[pos + 5] & 0xFF) << 8;
        if (type == 0 && length == 0 && zeros(pos, pos + HEADER)) {
          if (!zeros(pos, n)) {
            throw damage(base + pos, "zeroed record header followed by non-zero data");
          }
          if (zeroAt < 0) {
            zeroAt = base + pos;
          }
          return null; // RocksDB skips the rest of the block, as preallocated space
        }
        int header = recyclable(type) ? RECYCLABLE_HEADER : HEADER;
        if (left < header) {
          if (!full) {
            return tail(base + pos, "record header cut off by the end of the file");
          }
          throw damage(base + pos, "record header runs past its block");
        }
        if (header + length > left) {
          if (!full && !intactRecordAfter(pos + 1, n)) {
            return tail(base + pos, "record cut off by the end of the file");
          }
          if (!full) {
            throw damage(
                base + pos,
                "record length "
                    + length
                    + " runs past the end of the file, yet intact records"
                    + " follow (a damaged length, not a torn tail)");
          }
          throw damage(base + pos, "record length " + length + " runs past its block");
        }
        int stored =
            (block[pos] & 0xFF)
                | (block[pos + 1] & 0xFF) << 8
                | (block[pos + 2] & 0xFF) << 16
                | (block[pos + 3] & 0xFF) << 24;
        crc.reset();
        crc.update(block, pos + 6, header - 6 + length);
        if (mask((int) crc.getValue()) != stored) {
          throw damage(base + pos, "record checksum mismatch");
        }
        if (zeroAt >= 0) {
          throw damage(zeroAt, "zeroed record header with valid records after it");
        }
        record(base + pos, type, pos + header, length);
        pos += header + length;
        validEnd = base + pos;
      }
      return null;
    }

    /**
     * Whether an intact record that begins a logical record (or a meta record) starts anywhere from
     * {@code from} on in this block: then a length running past the end is damage, not what a crash
     * leaves (a crash leaves nothing intact after its torn record).
     */
    private boolean intactRecordAfter(int from, int n) {
      for (int q = from; q + HEADER <= n; q++) {
        int type = block[q + 6] & 0xFF;
        if (type != 1 && type != 2 && type != 5 && type != 6 && type < 9) {
          continue;
        }
        int length = (block[q + 4] & 0xFF) | (block[q + 5] & 0xFF) << 8;
        int header = recyclable(type) ? RECYCLABLE_HEADER : HEADER;
        if (q + header + length > n) {
          continue;
        }
        int stored =
            (block[q] & 0xFF)
                | (block[q + 1] & 0xFF) << 8
                | (block[q + 2] & 0xFF) << 16
                | (block[q + 3] & 0xFF) << 24;
        crc.reset();
        crc.update(block, q + 6, header - 6 + length);
        if (mask((int) crc.getValue()) == stored) {
          return true;
        }
      }
      return false;
    }

    private void record(long at, int type, int from, int length) {
      switch (type) {
        case 1, 5 -> {
          if (inFragment) {
            throw damage(fragmentAt, "fragmented record without its last fragment");
          }
          headLength = 0;
          append(from, length);
          complete();
        }
        case 2, 6 -> {
          if (inFragment) {
            throw damage(fragmentAt, "fragmented record without its last fragment");
          }
          inFragment = true;
          fragmentAt = at;
          headLength = 0;
          append(from, length);
        }
        case 3, 7, 4, 8 -> {
          if (!inFragment) {
            throw damage(at, "record fragment without its first fragment");
          }
          append(from, length);
          if (type == 4 || type == 8) {
            inFragment = false;
            complete();
          }
        }
        case 9 -> compressed |= length > 0 && block[from] != 0; // 0 is kNoCompression
        case 10, 11, 33, 34 -> {
          // Timestamp sizes and predecessor-WAL info: checksummed, nothing to check further.
        }
        default -> {
          if ((type & 32) == 0) {
            throw damage(at, "unknown record type " + type);
          }
        }
      }
    }

    private void append(int from, int length) {
      int take = Math.min(length, head.length - headLength);
      System.arraycopy(block, from, head, headLength, take);
      headLength += take;
    }

    private void complete() {
      if (!wal || compressed || headLength < 12) {
        return;
      }
      ByteBuffer b = ByteBuffer.wrap(head).order(ByteOrder.LITTLE_ENDIAN);
      long seq = b.getLong(0);
      long count = Integer.toUnsignedLong(b.getInt(8));
      lastSequence = Math.max(lastSequence, seq + Math.max(count, 1) - 1);
    }

    private Scan tail(long at, String why) {
      long where = zeroAt >= 0 ? zeroAt : inFragment ? fragmentAt : at;
      return new Scan(where, why, lastSequence, validEnd);
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

    private StoreCorruptedException damage(long at, String why) {
      return corrupted(file, at, why);
    }
  }

  static StoreCorruptedException corrupted(Path file, long at, String why) {
    return new StoreCorruptedException(
        "engine '"
            + RocksDbProvider.ID
            + "': "
            + file
            + " is damaged at offset "
            + at
            + ": "
            + why
            + (file.getFileName().toString().endsWith(".log")
                ? " (write-ahead log)"
                : " (MANIFEST, the list of table files)"),
        file,
        at);
  }

  /** The WAL files ({@code <number>.log}), oldest first. */
  static List<Path> walFiles(Path dir) {
    List<Path> out = new ArrayList<>();
    try (Stream<Path> s = Files.list(dir)) {
      s.filter(p -> WAL.matcher(p.getFileName().toString()).matches()).forEach(out::add);
    } catch (IOException e) {
      throw new StoreIOException(
          "engine '" + RocksDbProvider.ID + "': cannot list store directory " + dir, e);
    }
    out.sort(
        (a, b) ->
            Long.compare(
                Long.parseLong(a.getFileName().toString().replace(".log", "")),
                Long.parseLong(b.getFileName().toString().replace(".log", ""))));
    return out;
  }

  private static final Pattern WAL = Pattern.compile("\\d{1,18}\\.log");
}
