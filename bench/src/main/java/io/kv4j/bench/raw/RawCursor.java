package io.kv4j.bench.raw;

import io.kv4j.Cursor;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import java.util.Arrays;
import java.util.NoSuchElementException;

/** A forward cursor over a library iterator: subclasses fetch the next entry at or after a seek. */
abstract class RawCursor implements Cursor {
  private final KeyRange range;
  private long left;
  private Entry next;
  private boolean done;
  private boolean released;

  RawCursor(KeyRange range) {
    if (range.isReverse()) {
      throw new UnsupportedOperationException("raw bench stores scan forward only");
    }
    this.range = range;
    this.left = range.limitValue();
  }

  /** The next entry of the underlying iterator (the first at or after the lower bound), or null. */
  abstract Entry fetch();

  /** Frees the underlying iterator. */
  abstract void release();

  @Override
  public final boolean hasNext() {
    if (next != null) {
      return true;
    }
    if (done) {
      return false;
    }
    while (left > 0) {
      Entry e = fetch();
      if (e == null || !range.belowUpper(e.key())) {
        break;
      }
      if (range.lower() != null
          && !range.lowerInclusive()
          && Arrays.equals(e.key(), range.lower())) {
        continue; // exclusive lower bound
      }
      left--;
      next = e;
      return true;
    }
    done = true;
    close();
    return false;
  }

  @Override
  public final Entry next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    Entry e = next;
    next = null;
    return e;
  }

  @Override
  public final void close() {
    done = true;
    if (!released) {
      released = true;
      release();
    }
  }
}
