package io.kv4j.server;

import java.util.Arrays;

/** A key as a map key: equality and hash by content. */
final class Key {
  final byte[] bytes;
  private final int hash;

  Key(byte[] bytes) {
    this.bytes = bytes;
    this.hash = Arrays.hashCode(bytes);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Key k && k.hash == hash && Arrays.equals(k.bytes, bytes);
  }

  @Override
  public int hashCode() {
    return hash;
  }
}
