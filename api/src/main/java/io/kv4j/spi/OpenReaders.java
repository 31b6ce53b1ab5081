package io.kv4j.spi;

import io.kv4j.StoreStats;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * The cursors and snapshots one store (or keyspace handle) has open: tracked from open to close,
 * counted for {@link AbstractStore#stats()}, and closed when the store closes. A reader opened
 * while the store closes is closed by whichever side sees the other: its open, finding the store
 * closed, closes it and throws; otherwise {@link #closeAll()} finds it.
 */
final class OpenReaders {
  private final AbstractStore store;
  private final Set<AbstractCursor> cursors = ConcurrentHashMap.newKeySet();
  private final Set<AbstractSnapshot> snapshots = ConcurrentHashMap.newKeySet();

  OpenReaders(AbstractStore store) {
    this.store = store;
  }

  /** Tracks an open cursor; closes it and throws if the store closed meanwhile. */
  void add(AbstractCursor c) {
    cursors.add(c);
    if (store.isClosed()) { // closeAll() ran concurrently and may have missed this cursor
      c.closeByStore();
      store.checkOpen();
    }
  }

  /** Tracks an open snapshot; closes it and throws if the store closed meanwhile. */
  void add(AbstractSnapshot s) {
    snapshots.add(s);
    if (store.isClosed()) { // closeAll() ran concurrently and may have missed this snapshot
      s.closeByStore();
      store.checkOpen();
    }
  }

  /** Forgets a cursor that closed. */
  void remove(AbstractCursor c) {
    cursors.remove(c);
  }

  /** Forgets a snapshot that closed. */
  void remove(AbstractSnapshot s) {
    snapshots.remove(s);
  }

  /** How many cursors are open right now. */
  int cursors() {
    return cursors.size();
  }

  /**
   * The engine's stats with the open cursors (and, when {@code snapshots}, the open snapshots)
   * added to its figures, so that a leak (a cursor a forEach or a stream failed to close) shows up
   * and the TCK can check for it (rule 4.10).
   */
  StoreStats counted(StoreStats s, boolean withSnapshots) {
    Map<String, Number> figures = new LinkedHashMap<>(s.figures());
    figures.put(AbstractStore.OPEN_CURSORS, cursors.size());
    if (withSnapshots) {
      figures.put(AbstractStore.OPEN_SNAPSHOTS, snapshots.size());
    }
    return new StoreStats(s.keyCount(), s.keyCountExact(), s.diskBytes(), figures);
  }

  /**
   * Closes every open snapshot (with its cursors), then every other open cursor, each once. One
   * that throws does not keep the rest open: the first exception is thrown after all were closed,
   * later ones added to it as suppressed.
   */
  void closeAll() {
    RuntimeException failed = closeEach(snapshots, AbstractSnapshot::closeByStore, null);
    failed = closeEach(cursors, AbstractCursor::closeByStore, failed);
    if (failed != null) {
      throw failed;
    }
  }

  /**
   * Closes each of {@code open} (a copy of it: closing removes one from the set) with {@code
   * close}, going on past one that throws.
   *
   * @return {@code failed}, or else the first exception thrown, later ones added as suppressed
   */
  static <T> RuntimeException closeEach(
      Collection<T> open, Consumer<T> close, RuntimeException failed) {
    for (T reader : new ArrayList<>(open)) {
      try {
        close.accept(reader);
      } catch (RuntimeException e) {
        if (failed == null) {
          failed = e;
        } else {
          failed.addSuppressed(e);
        }
      }
    }
    return failed;
  }
}
