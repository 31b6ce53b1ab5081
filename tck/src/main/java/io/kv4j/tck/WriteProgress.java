package io.kv4j.tck;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;

/**
 * The bytes a process has handed to {@code write}-family system calls so far ({@code wchar} in
 * Linux's {@code /proc/<pid>/io}), read again on each call: how the crash rules aim a kill at a
 * moment inside a batch by the progress of the engine's writes rather than by time, which a busy
 * machine makes unreliable. Absent where {@code /proc} does not offer it (the rules then aim by
 * time).
 */
final class WriteProgress implements AutoCloseable {
  private static final byte[] FIELD = "wchar:".getBytes(StandardCharsets.US_ASCII);

  private final FileChannel io;
  private final ByteBuffer buf = ByteBuffer.allocate(512);

  private WriteProgress(FileChannel io) {
    this.io = io;
  }

  /** The progress of process {@code pid}, if this system reports it. */
  static Optional<WriteProgress> of(long pid) {
    try {
      WriteProgress p =
          new WriteProgress(
              FileChannel.open(
                  Path.of("/proc", Long.toString(pid), "io"), StandardOpenOption.READ));
      if (p.written() < 0) {
        p.close();
        return Optional.empty();
      }
      return Optional.of(p);
    } catch (IOException | UnsupportedOperationException | SecurityException e) {
      return Optional.empty();
    }
  }

  /** The bytes of the current process, or -1 where this system does not report them. */
  static long ofThisProcess() {
    try (WriteProgress p =
        new WriteProgress(FileChannel.open(Path.of("/proc/self/io"), StandardOpenOption.READ))) {
      return p.written();
    } catch (IOException | UnsupportedOperationException | SecurityException e) {
      return -1;
    }
  }

  /** The bytes written so far, or -1 once the process is gone (or the file says no more). */
  long written() {
    buf.clear();
    try {
      while (buf.hasRemaining() && io.read(buf, buf.position()) > 0) {
        // procfs regenerates the file at offset 0; read it whole
      }
    } catch (IOException e) {
      return -1; // the process exited: its /proc entry went away
    }
    return parse(buf.array(), buf.position());
  }

  /** The number after {@code wchar:} in the first {@code length} bytes, or -1. */
  static long parse(byte[] text, int length) {
    outer:
    for (int i = 0; i + FIELD.length <= length; i++) {
      for (int j = 0; j < FIELD.length; j++) {
        if (text[i + j] != FIELD[j]) {
          continue outer;
        }
      }
      int k = i + FIELD.length;
      while (k < length && text[k] == ' ') {
        k++;
      }
      long v = 0;
      int digits = 0;
      while (k < length && text[k] >= '0' && text[k] <= '9') {
        v = v * 10 + (text[k++] - '0');
        digits++;
      }
      return digits > 0 ? v : -1;
    }
    return -1;
  }

  @Override
  public void close() {
    try {
      io.close();
    } catch (IOException e) {
      // a read-only procfs handle: nothing to flush, nothing to lose
    }
  }
}
