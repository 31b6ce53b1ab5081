package io.kv4j.bench;

import io.kv4j.spi.StoreProvider;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code --rounds N}: loads every engine's main store first and keeps them all open; then, for each
 * timed scenario and thread count, the engines take turns window by window, N windows each, the
 * order rotating every round (for two engines: A B, B A, A B, ...), each window once the process
 * has gone quiet ({@link #settle}). A drift of the machine over the minutes of a run then lands on
 * every engine alike instead of on whichever ran last. The rest (during-churn, footprint after
 * update, the scenarios of their own stores) runs engine by engine as without rounds.
 */
final class Rounds {
  private static final long SETTLE_SAMPLE_NS = TimeUnit.MILLISECONDS.toNanos(100);
  private static final long SETTLE_MAX_NS = TimeUnit.SECONDS.toNanos(10);

  private final Rig rig;
  private final Session session;
  private final int rounds;

  Rounds(Rig rig, Session session) {
    this.rig = rig;
    this.session = session;
    this.rounds = rig.options().rounds;
  }

  /**
   * Measures every engine, the timed scenarios taking turns.
   *
   * @param engines the engines, in order
   */
  void run(List<StoreProvider> engines) {
    List<Session.Loaded> loaded = new ArrayList<>();
    List<StoreProvider> rest = new ArrayList<>();
    try {
      for (StoreProvider p : engines) {
        rig.progress().nextEngine();
        try {
          Session.Loaded l = session.load(p);
          if (l != null) {
            rest.add(p);
            if (l.store() != null) {
              loaded.add(l);
            }
          }
        } catch (RuntimeException | Error e) {
          session.failed(p.id(), e);
        }
      }
      timed(loaded);
      for (Session.Loaded l : List.copyOf(loaded)) {
        try {
          session.afterTimed(l);
        } catch (RuntimeException | Error e) {
          session.failed(l.id(), e);
        } finally {
          loaded.remove(l);
          l.close();
        }
      }
    } finally {
      for (Session.Loaded l : loaded) {
        try {
          l.close();
        } catch (RuntimeException e) {
          rig.log(l.id(), "close failed: " + e);
        }
      }
    }
    for (StoreProvider p : rest) {
      try {
        session.standalone(p);
      } catch (RuntimeException | Error e) {
        session.failed(p.id(), e);
      }
    }
    session.batchRounds(rest);
  }

  /** Every selected timed scenario of the main store, the able engines taking turns. */
  private void timed(List<Session.Loaded> loaded) {
    Map<Session.Loaded, List<Scenario>> can = new LinkedHashMap<>();
    for (Session.Loaded l : loaded) {
      can.put(l, session.timedScenarios(l));
    }
    for (Scenario s : rig.options().scenarios) {
      List<Session.Loaded> able = new ArrayList<>();
      for (Session.Loaded l : loaded) {
        if (can.get(l).contains(s)) {
          able.add(l);
        }
      }
      for (int t : s.threads().counts(rig.options().threads)) {
        interleave(able, s, t);
      }
    }
  }

  private void interleave(List<Session.Loaded> engines, Scenario s, int threads) {
    int n = engines.size();
    List<List<Window>> windows = new ArrayList<>();
    boolean[] out = new boolean[n];
    for (int e = 0; e < n; e++) {
      windows.add(new ArrayList<>());
    }
    // One window per engine that is not counted: in a fresh JVM the first second or two of any
    // engine's operations run slow (the heap's pages are touched for the first time, the JIT is
    // still compiling), and without it the engine that happens to go first in round 1 pays for
    // that alone (seen: a 542k/s window among three of 0.9-1.0M/s, which set its p99).
    for (int e = 0; e < n; e++) {
      Session.Loaded l = engines.get(e);
      Window w = turn(l, s, threads, out, e);
      if (w != null) {
        rig.log(
            l.id(),
            String.format(
                "%-18s t=%d warm-up window (not counted) %,12.0f ops/s",
                s.id(), threads, w.opsPerSec()));
      }
    }
    for (int r = 0; r < rounds; r++) {
      for (int k = 0; k < n; k++) {
        int e = (k + r) % n;
        if (out[e]) {
          continue;
        }
        Session.Loaded l = engines.get(e);
        Window w = turn(l, s, threads, out, e);
        if (w == null) {
          continue;
        }
        windows.get(e).add(w);
        rig.log(
            l.id(),
            String.format(
                "%-18s t=%d round %d/%d %,12.0f ops/s",
                s.id(), threads, r + 1, rounds, w.opsPerSec()));
      }
    }
    for (int e = 0; e < n; e++) {
      if (!out[e]) {
        Session.Loaded l = engines.get(e);
        Result r = Rows.combine(l.id(), s.id(), threads, l.main().durability(), windows.get(e));
        if (r.ok()) {
          rig.progress().result(r, "median of " + windows.get(e).size());
        }
        rig.add(r);
      }
    }
  }

  /**
   * One window of engine {@code e} once the process is quiet; or, if it failed, null: the failure
   * is recorded as the engine's row and the engine is marked {@code out} for the scenario.
   */
  private Window turn(Session.Loaded l, Scenario s, int threads, boolean[] out, int e) {
    settle(rig, l.id());
    Window w;
    try {
      w = rig.run(l.id(), s, l.wl(), l.workers(), threads);
    } catch (RuntimeException | Error x) {
      w = Window.failed(x);
    }
    if (w.failure().get() != null) {
      out[e] = true;
      rig.add(rig.summarize(l.id(), s.id(), "", threads, l.main().durability(), w));
      return null;
    }
    return w;
  }

  /**
   * Waits until the process has used under a tenth of one core over 100 ms, for at most 10 s: the
   * previous window's background work (an engine's compaction or flushes, GC) then ends before the
   * next engine's window starts, instead of being charged to it.
   *
   * @param rig logs a wait that ran out
   * @param next the engine to measure next
   */
  static void settle(Rig rig, String next) {
    long deadline = System.nanoTime() + SETTLE_MAX_NS;
    while (true) {
      long c0 = Timing.processCpu();
      long t0 = System.nanoTime();
      Timing.sleepUntil(t0 + SETTLE_SAMPLE_NS);
      long used = Timing.processCpu() - c0;
      long now = System.nanoTime();
      if (used < (now - t0) / 10 || Thread.currentThread().isInterrupted()) {
        return;
      }
      if (now - deadline >= 0) {
        rig.log(next, "process still busy after 10 s of settling; measuring anyway");
        return;
      }
    }
  }
}
