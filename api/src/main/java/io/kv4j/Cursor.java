package io.kv4j;

import java.util.Iterator;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * Entries of a {@link KeyRange}, in unsigned key order (descending for a reversed range). Use it in
 * try-with-resources; a cursor holds engine resources (a snapshot, a native iterator, a read
 * transaction) until it is closed or exhausted.
 *
 * <pre>{@code
 * try (Cursor c = store.scan(KeyRange.prefix(p))) {
 *   while (c.hasNext()) {
 *     Entry e = c.next();
 *   }
 * }
 * }</pre>
 *
 * <p>A cursor is used by one thread at a time. {@link #close()} is idempotent. After close, {@link
 * #hasNext()} and {@link #next()} throw {@link IllegalStateException}; if the store was closed
 * underneath, they throw {@link StoreClosedException}. Whether writes made while a cursor is open
 * are visible depends on {@link Feature#SNAPSHOT_SCAN}; without it each key still appears at most
 * once and in order.
 */
public interface Cursor extends Iterator<Entry>, AutoCloseable {

  /**
   * Whether another entry is in range.
   *
   * @return true if {@link #next()} will return an entry
   * @throws IllegalStateException if the cursor was closed
   * @throws StoreClosedException if the store was closed
   */
  @Override
  boolean hasNext();

  /**
   * The next entry.
   *
   * @return the next entry; its arrays belong to the caller
   * @throws java.util.NoSuchElementException if there is none
   * @throws IllegalStateException if the cursor was closed
   * @throws StoreClosedException if the store was closed
   */
  @Override
  Entry next();

  /** Releases the cursor's resources. Idempotent; never throws. */
  @Override
  void close();

  /**
   * The remaining entries as a sequential stream; closing the stream closes this cursor. Use it in
   * try-with-resources unless the stream is consumed to the end (an exhausted cursor has already
   * released its resources).
   *
   * @return a stream over the remaining entries
   */
  default Stream<Entry> stream() {
    Spliterator<Entry> s =
        Spliterators.spliteratorUnknownSize(
            this, Spliterator.ORDERED | Spliterator.NONNULL | Spliterator.DISTINCT);
    return StreamSupport.stream(s, false).onClose(this::close);
  }
}
