package io.kv4j.typed;

import java.util.Objects;

/** Byte arrays as they are, keys and values. */
final class ByteArrays implements KeyCodec<byte[]>, ValueCodec<byte[]> {
  static final ByteArrays INSTANCE = new ByteArrays();

  private ByteArrays() {}

  @Override
  public byte[] encode(byte[] key) {
    return Objects.requireNonNull(key, "bytes");
  }

  @Override
  public byte[] decode(byte[] bytes) {
    return bytes;
  }

  @Override
  public String toString() {
    return "bytes";
  }
}
