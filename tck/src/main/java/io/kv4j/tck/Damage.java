package io.kv4j.tck;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The damages of group 12 ({@link Group12Damage}), each applied to one file of a copy of the store.
 */
enum Damage {
  /** Rule 12.1: the file truncated to half its length. */
  TRUNCATE_HALF("truncate-half", false),
  /** Rule 12.2: the file truncated to 0 bytes. */
  TRUNCATE_ZERO("truncate-zero", false),
  /** Rule 12.3: the file deleted. */
  DELETE("delete", false),
  /** Rule 12.4: bit 4 of the byte at offset {@code size / 2} flipped. */
  FLIP_BIT("flip-bit", true),
  /** Rule 12.5: 4 KiB zeroed around the file's middle. */
  ZERO_BLOCK("zero-4k", true),
  /**
   * Rule 12.8: bit 4 of the file's last non-zero byte flipped: in a log, the last record, which a
   * clean close leaves whole (never a torn tail to drop); in a file padded with zeros, the end of
   * what was written.
   */
  FLIP_LAST("flip-last-bit", true),
  /** Rule 12.6: the directory's contents replaced by another engine's store (never applied). */
  FOREIGN(DamageWorker.FOREIGN, false);

  final String kind;
  final boolean needsChecksums;

  Damage(String kind, boolean needsChecksums) {
    this.kind = kind;
    this.needsChecksums = needsChecksums;
  }

  /**
   * Damages a file.
   *
   * @return what was done, for messages, or null when this damage would change nothing (an empty
   *     file cannot be truncated, flipped or zeroed)
   */
  String apply(Path file) throws IOException {
    long size = Files.size(file);
    if (this == DELETE) {
      Files.delete(file);
      return "deleted (it had " + size + " bytes)";
    }
    if (size == 0) {
      return null;
    }
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
      switch (this) {
        case TRUNCATE_HALF -> {
          ch.truncate(size / 2);
          return "truncated from " + size + " to " + size / 2 + " bytes";
        }
        case TRUNCATE_ZERO -> {
          ch.truncate(0);
          return "truncated from " + size + " to 0 bytes";
        }
        case FLIP_BIT -> {
          long at = size / 2;
          ByteBuffer one = ByteBuffer.allocate(1);
          try (FileChannel r = FileChannel.open(file, StandardOpenOption.READ)) {
            r.read(one, at);
          }
          int old = one.get(0) & 0xff;
          int now = old ^ 0x10;
          ch.write(ByteBuffer.wrap(new byte[] {(byte) now}), at);
          return String.format(
              "with bit 4 of the byte at offset %d flipped (0x%02x -> 0x%02x; %d bytes)",
              at, old, now, size);
        }
        case FLIP_LAST -> {
          long at = lastNonZeroByte(file, size);
          ByteBuffer one = ByteBuffer.allocate(1);
          try (FileChannel r = FileChannel.open(file, StandardOpenOption.READ)) {
            r.read(one, at);
          }
          int old = one.get(0) & 0xff;
          int now = old ^ 0x10;
          ch.write(ByteBuffer.wrap(new byte[] {(byte) now}), at);
          return String.format(
              "with bit 4 of its last non-zero byte, at offset %d, flipped (0x%02x -> 0x%02x;"
                  + " %d bytes)",
              at, old, now, size);
        }
        case ZERO_BLOCK -> {
          long from = Math.max(0, size / 2 - 2048);
          long to = Math.min(size, from + 4096);
          ch.write(ByteBuffer.allocate((int) (to - from)), from);
          return "with bytes "
              + from
              + ".."
              + (to - 1)
              + " zeroed ("
              + (to - from)
              + " bytes in the middle of "
              + size
              + ")";
        }
        default -> throw new IllegalStateException(name());
      }
    }
  }

  /** The offset of the last byte of {@code file} that is not zero, or its last byte if none is. */
  static long lastNonZeroByte(Path file, long size) throws IOException {
    try (FileChannel r = FileChannel.open(file, StandardOpenOption.READ)) {
      ByteBuffer chunk = ByteBuffer.allocate(64 << 10);
      for (long end = size; end > 0; ) {
        long from = Math.max(0, end - chunk.capacity());
        chunk.clear().limit((int) (end - from));
        while (chunk.hasRemaining() && r.read(chunk, from + chunk.position()) > 0) {
          // read the whole chunk
        }
        for (int i = chunk.position() - 1; i >= 0; i--) {
          if (chunk.get(i) != 0) {
            return from + i;
          }
        }
        end = from;
      }
    }
    return size - 1;
  }
}
