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

  /**
   * What of them is charged to the server-wide input budget: SETs kept on an event loop wait for
   * the committer beyond the read that brought them, so they count as buffered input until written.
   */
  long charged;

  /** Whether no more should be added before they are written. */
  boolean full() {
    return keys.size() >= Commands.PENDING_SETS || bytes >= Commands.PENDING_BYTES;
  }

  void clear() {
    keys.clear();
    values.clear();
    bytes = 0;
    charged = 0;
  }
}
