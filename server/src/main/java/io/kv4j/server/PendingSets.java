package io.kv4j.server;

import java.util.ArrayList;
import java.util.List;

/**
 * Plain SETs of one connection's pipeline waiting to be written together (see {@link Commands}).
 */
final class PendingSets {
  final List<byte[]> keys = new ArrayList<>();
  final List<byte[]> values = new ArrayList<>();

  /** The bytes of their keys and values. */
  long bytes;

  /** Whether no more should be added before they are written. */
  boolean full() {
    return keys.size() >= Commands.PENDING_SETS || bytes >= Commands.PENDING_BYTES;
  }

  void clear() {
    keys.clear();
    values.clear();
    bytes = 0;
  }
}
