package io.kv4j;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * The reads that a {@link Store} and a {@link Snapshot} share: code that only reads (a checksum,
 * the source of a copy, an export) takes a {@code ReadView} and works on either. A {@code Store}
 * reads its current state; a {@code Snapshot} reads the state of the moment {@link
 * Store#snapshot()} returned, whatever is written meanwhile.
 *
 * <p>Keys are checked as {@link Store} checks them: 1..{@link Limits#maxKeySize()} bytes. Arrays
 * passed in are never retained; arrays returned are fresh copies owned by the caller. What a read
 * throws once its view is closed is said by {@link Store} and {@link Snapshot}. A view does not
 * close itself: whoever opened it closes it.
 */
public interface ReadView {

  /**
   * Reads a value as of this view.
   *
   * @param key the key
   * @return a copy of the value, or null when the key is absent
   */
  byte[] get(byte[] key);

  /**
   * Reads several values. Each value is read as {@link #get(byte[])} would; engines with a native
   * batch read (RocksDB {@code multiGet}, one SQL statement, Redis {@code MGET}) use it. On a
   * {@link Snapshot} every value is read as of the snapshot; on a {@link Store} the values are not
   * read at one point in time unless the engine's README says so: use {@link Store#snapshot()} for
   * that.
   *
   * @param keys the keys; duplicates allowed
   * @return the values in the order of {@code keys}, null where a key is absent
   */
  default List<byte[]> getAll(List<byte[]> keys) {
    Objects.requireNonNull(keys, "keys");
    List<byte[]> values = new ArrayList<>(keys.size());
    for (byte[] key : keys) {
      values.add(get(key));
    }
    return values;
  }

  /**
   * Opens a cursor over a range as of this view. Requires {@link Feature#ORDERED_SCAN}; a reversed
   * range requires {@link Feature#REVERSE_SCAN}.
   *
   * @param range which keys, in which direction, how many
   * @return an open cursor, to be closed by the caller; closing the view closes it too
   * @throws UnsupportedOperationException if the engine lacks a feature the range needs
   */
  Cursor scan(KeyRange range);

  /**
   * Whether a key is present as of this view.
   *
   * @param key the key
   * @return true if {@link #get(byte[])} would return non-null
   */
  default boolean contains(byte[] key) {
    return get(key) != null;
  }

  /**
   * Calls {@code action} for each entry of {@code range} as of this view, and closes the cursor,
   * also when the action throws.
   *
   * @param range which entries
   * @param action what to do with each
   */
  default void forEach(KeyRange range, Consumer<? super Entry> action) {
    try (Cursor c = scan(range)) {
      c.forEachRemaining(action);
    }
  }

  /**
   * The entries of {@code range} as of this view, as a stream that owns its cursor: close the
   * stream (try with resources) unless it is consumed to the end.
   *
   * @param range which entries
   * @return a stream closing the cursor when closed
   */
  default Stream<Entry> stream(KeyRange range) {
    return scan(range).stream();
  }
}
