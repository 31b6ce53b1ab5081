package io.kv4j.rocksdb;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.stream.Stream;

/** A store directory's table files, and the damage tests do to them. */
final class TableFiles {
  private TableFiles() {}

  /** The table files ({@code *.sst}) of a store directory, sorted by name. */
  static List<Path> list(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(p -> p.getFileName().toString().endsWith(".sst")).sorted().toList();
    }
  }

  /**
   * Inverts 16 bytes a third into a table file: inside its data blocks, before index and footer.
   */
  static void invertDataBytes(Path table) throws IOException {
    try (FileChannel ch =
        FileChannel.open(table, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      long at = ch.size() / 3;
      ByteBuffer b = ByteBuffer.allocate(16);
      ch.read(b, at);
      b.flip();
      for (int i = 0; i < b.limit(); i++) {
        b.put(i, (byte) ~b.get(i));
      }
      ch.write(b, at);
      ch.force(false);
    }
  }
}
