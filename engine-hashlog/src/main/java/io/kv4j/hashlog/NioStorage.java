package io.kv4j.hashlog;

import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

/**
 * {@link Storage} on the real file system. Files are {@link RandomAccessFile}s, whose I/O, unlike a
 * {@link FileChannel}'s, is not aborted (and the descriptor not closed) when the calling thread is
 * interrupted; vectored writes and positional reads use its channel.
 */
final class NioStorage implements Storage {
  NioStorage() {}

  @Override
  public File open(Path file, Mode mode) throws IOException {
    RandomAccessFile raf;
    switch (mode) {
      case READ:
        if (!Files.exists(file)) {
          throw new NoSuchFileException(file.toString());
        }
        raf = new RandomAccessFile(file.toFile(), "r");
        break;
      case CREATE_NEW:
        if (Files.exists(file)) {
          throw new FileAlreadyExistsException(file.toString());
        }
        Files.createFile(file);
        raf = new RandomAccessFile(file.toFile(), "rw");
        break;
      case CREATE_TRUNCATE:
        raf = new RandomAccessFile(file.toFile(), "rw");
        try {
          raf.setLength(0);
        } catch (IOException e) {
          raf.close();
          throw e;
        }
        break;
      default:
        raf = new RandomAccessFile(file.toFile(), "rw");
        break;
    }
    return new NioFile(raf);
  }

  @Override
  public void move(Path from, Path to) throws IOException {
    Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
  }

  @Override
  public boolean deleteIfExists(Path file) throws IOException {
    return Files.deleteIfExists(file);
  }

  @Override
  public void forceDirectory(Path dir) throws IOException {
    try (FileChannel ch = FileChannel.open(dir, java.nio.file.StandardOpenOption.READ)) {
      ch.force(true);
    }
  }

  @Override
  public void writeAtomically(Path file, byte[] content) throws IOException {
    StoreDirectory.writeAtomically(file, content);
  }

  @Override
  public byte[] readAll(Path file) throws IOException {
    return Files.readAllBytes(file);
  }

  @Override
  public long size(Path file) throws IOException {
    return Files.size(file);
  }

  @Override
  public boolean exists(Path p) {
    return Files.exists(p);
  }

  @Override
  public List<Path> list(Path dir) throws IOException {
    List<Path> out = new ArrayList<>();
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
      for (Path p : ds) {
        out.add(p);
      }
    }
    return out;
  }

  @Override
  public void createDirectories(Path dir) throws IOException {
    Files.createDirectories(dir);
  }

  @Override
  public void createLink(Path link, Path existing) throws IOException {
    Files.createLink(link, existing);
  }

  @Override
  public void copy(Path from, Path to) throws IOException {
    Files.copy(from, to);
  }

  private static final class NioFile implements File {
    private final RandomAccessFile raf;

    NioFile(RandomAccessFile raf) {
      this.raf = raf;
    }

    @Override
    public void seek(long position) throws IOException {
      raf.seek(position);
    }

    @Override
    public void write(byte[] src, int off, int len) throws IOException {
      raf.write(src, off, len);
    }

    @Override
    public void write(ByteBuffer... srcs) throws IOException {
      FileChannel ch = raf.getChannel();
      long left = 0;
      for (ByteBuffer b : srcs) {
        left += b.remaining();
      }
      while (left > 0) {
        left -= ch.write(srcs);
      }
    }

    @Override
    public int read(ByteBuffer dst, long position) throws IOException {
      return raf.getChannel().read(dst, position);
    }

    @Override
    public long size() throws IOException {
      return raf.length();
    }

    @Override
    public void truncate(long length) throws IOException {
      raf.setLength(length);
    }

    @Override
    public void force() throws IOException {
      raf.getFD().sync();
    }

    @Override
    public MappedByteBuffer map(boolean writable, long size) throws IOException {
      return Mappings.map(
          raf.getChannel(),
          writable ? FileChannel.MapMode.READ_WRITE : FileChannel.MapMode.READ_ONLY,
          size);
    }

    @Override
    public void force(MappedByteBuffer map, int from, int len) {
      map.force(from, len);
    }

    @Override
    public void close() throws IOException {
      raf.close();
    }
  }
}
