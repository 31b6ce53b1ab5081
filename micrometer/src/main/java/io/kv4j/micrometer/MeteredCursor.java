package io.kv4j.micrometer;

import io.kv4j.Cursor;
import io.kv4j.Entry;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A cursor that counts itself closed once: when closed, when read to the end (an exhausted cursor
 * has released its resources), or when the handle that opened it closes. Its reads are not timed
 * (one timer sample per entry would cost more than many engines' {@code next}); their errors are
 * counted under the operation that opened it.
 */
final class MeteredCursor implements Cursor {
  private final Cursor delegate;
  private final Meters meters;
  private final Operation operation;
  private final Set<Runnable> owner;
  private final Runnable closer = this::close;
  private final AtomicBoolean finished = new AtomicBoolean();

  MeteredCursor(Cursor delegate, Meters meters, Operation operation, Set<Runnable> owner) {
    this.delegate = delegate;
    this.meters = meters;
    this.operation = operation;
    this.owner = owner;
    meters.cursorsOpened.increment();
    owner.add(closer);
  }

  @Override
  public boolean hasNext() {
    boolean more;
    try {
      more = delegate.hasNext();
    } catch (RuntimeException | Error e) {
      meters.error(operation, e);
      throw e;
    }
    if (!more) {
      finished();
    }
    return more;
  }

  @Override
  public Entry next() {
    try {
      return delegate.next();
    } catch (RuntimeException | Error e) {
      meters.error(operation, e);
      throw e;
    }
  }

  @Override
  public void close() {
    try {
      delegate.close();
    } finally {
      finished();
    }
  }

  private void finished() {
    if (finished.compareAndSet(false, true)) {
      meters.cursorsClosed.increment();
      owner.remove(closer);
    }
  }
}
