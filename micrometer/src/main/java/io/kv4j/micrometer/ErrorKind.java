package io.kv4j.micrometer;

import io.kv4j.StoreClosedException;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreLockedException;

/**
 * The {@code kind} tag of {@code kv4j.store.errors}: the cases of the {@link
 * io.kv4j.StoreException} family a caller acts on, and {@code other} for everything else (misuse
 * such as an oversized key, an unsupported feature, an engine's plain {@code StoreException}).
 */
enum ErrorKind {
  CLOSED("closed"),
  CORRUPTED("corrupted"),
  IO("io"),
  LOCKED("locked"),
  OTHER("other");

  final String tag;

  ErrorKind(String tag) {
    this.tag = tag;
  }

  static ErrorKind of(Throwable error) {
    if (error instanceof StoreClosedException) {
      return CLOSED;
    }
    if (error instanceof StoreCorruptedException) {
      return CORRUPTED;
    }
    if (error instanceof StoreIOException) {
      return IO;
    }
    if (error instanceof StoreLockedException) {
      return LOCKED;
    }
    return OTHER;
  }
}
