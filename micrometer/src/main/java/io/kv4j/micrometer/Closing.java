package io.kv4j.micrometer;

import java.util.List;
import java.util.Set;

/** Closes what a handle opened when the handle closes, so that closes are counted. */
final class Closing {
  private Closing() {}

  /**
   * Runs each closer of a copy of {@code open}: a closer removes itself from the set as it runs.
   * Closing a cursor or snapshot never throws (their contracts say so); a keyspace handle's close
   * neither.
   */
  static void all(Set<Runnable> open) {
    for (Runnable closer : List.copyOf(open)) {
      closer.run();
    }
  }
}
