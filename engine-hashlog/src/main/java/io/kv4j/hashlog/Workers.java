package io.kv4j.hashlog;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A fixed pool of a store's background threads, shared by the store and all its keyspaces: the
 * sealer is one such pool (one thread), compaction another ({@code compaction-threads}). Each
 * keyspace's {@link Sealer} or {@link Compactor} is a {@link Job} in it, so the store runs the same
 * threads whatever its number of keyspaces.
 *
 * <p><b>Fairness</b>: a job with work is queued once (first in, first out) and runs one {@link
 * Job#work} at a time; a job with more to do goes to the back of the queue, behind every other job
 * that has work. A job may be queued while a thread runs it, so with several threads one store's
 * compaction can run concurrently with itself, as it did with threads of its own.
 *
 * <p><b>Failures</b>: a step that throws anything is its job's death, reported to that job's store
 * ({@link Job#died}), which fails it until reopened, naming the thread; the pool's threads go on
 * serving the other jobs. Only a failure of the pool itself ends a thread, which fails the store
 * that started it (the root store, see {@link StoreState#startThread}).
 *
 * <p><b>Removal</b>: {@link #remove} takes a job out and waits until no thread runs it any more
 * (waking the threads that run it from a park), exactly once per job: the job's store is closing or
 * its keyspace is dropped.
 */
final class Workers {
  /** Background work of one store (or keyspace), done one step at a time. */
  interface Job {
    /**
     * Does one unit of work.
     *
     * @return whether there is more to do now (the job is queued again, behind the others)
     */
    boolean work();

    /** A step threw {@code e} on thread {@code thread}: this job runs no more. */
    void died(String thread, Throwable e);
  }

  private static final class Entry {
    boolean queued;
    final List<Thread> running = new ArrayList<>(1);
  }

  private final ArrayDeque<Job> ready = new ArrayDeque<>(); // guarded by this
  private final Map<Job, Entry> jobs = new IdentityHashMap<>(); // guarded by this
  private final List<Thread> threads = new ArrayList<>();
  private final long tickNanos;
  private long nextTick; // guarded by this
  private boolean closing; // guarded by this

  /**
   * Starts {@code n} threads named {@code name-i suffix} ({@code name suffix} for a single thread
   * not {@code numbered}).
   *
   * @param tickMillis every so often each job is queued even if nothing woke it (0: never)
   */
  Workers(StoreState root, String name, String suffix, int n, boolean numbered, long tickMillis) {
    this.tickNanos = TimeUnit.MILLISECONDS.toNanos(tickMillis);
    this.nextTick = System.nanoTime() + tickNanos;
    for (int i = 0; i < n; i++) {
      String t = (numbered || n > 1 ? name + "-" + i : name) + " " + suffix;
      threads.add(root.startThread(t, this::loop));
    }
  }

  /** Adds a job (it runs once woken). */
  synchronized void add(Job j) {
    if (!closing) {
      jobs.putIfAbsent(j, new Entry());
    }
  }

  /** Queues {@code j} for a step unless it is queued already, removed or dead. */
  synchronized void wake(Job j) {
    Entry e = jobs.get(j);
    if (e != null && !e.queued) {
      e.queued = true;
      ready.addLast(j);
      notifyAll();
    }
  }

  /** Whether {@code j} is added and not yet removed nor dead. */
  synchronized boolean serves(Job j) {
    return jobs.containsKey(j) && anyAlive();
  }

  /**
   * Removes {@code j} and waits until no thread runs it (the caller's interrupt status is kept);
   * the caller has told the job to stop first. A thread of this pool does not wait for itself.
   */
  synchronized void remove(Job j) {
    Entry e = jobs.remove(j);
    if (e == null) {
      return;
    }
    if (e.queued) {
      ready.remove(j);
      e.queued = false;
    }
    boolean interrupted = false;
    while (runsElsewhere(e)) {
      for (Thread t : e.running) {
        LockSupport.unpark(t);
      }
      try {
        wait(100);
      } catch (InterruptedException x) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  private boolean runsElsewhere(Entry e) {
    for (Thread t : e.running) {
      if (t != Thread.currentThread() && t.isAlive()) {
        return true;
      }
    }
    return false;
  }

  private boolean anyAlive() {
    for (Thread t : threads) {
      if (t.isAlive()) {
        return true;
      }
    }
    return false;
  }

  /** Stops the threads and waits for them; the jobs were removed before. */
  void close() {
    synchronized (this) {
      closing = true;
      ready.clear();
      jobs.clear();
      notifyAll();
    }
    for (Thread t : threads) {
      Sealer.awaitEnd(t);
    }
  }

  private void loop() {
    while (true) {
      Job j;
      Entry e;
      synchronized (this) {
        while (ready.isEmpty() && !closing) {
          long now = System.nanoTime();
          if (tickNanos > 0 && now - nextTick >= 0) {
            nextTick = now + tickNanos;
            for (Map.Entry<Job, Entry> x : jobs.entrySet()) {
              if (!x.getValue().queued) {
                x.getValue().queued = true;
                ready.addLast(x.getKey());
              }
            }
            continue;
          }
          try {
            if (tickNanos > 0) {
              TimeUnit.NANOSECONDS.timedWait(this, nextTick - now);
            } else {
              wait();
            }
          } catch (InterruptedException x) {
            // Engine-owned thread: only close ends it, which sets closing.
          }
        }
        if (closing) {
          return;
        }
        j = ready.pollFirst();
        e = jobs.get(j);
        e.queued = false;
        e.running.add(Thread.currentThread());
      }
      boolean more;
      try {
        more = j.work();
      } catch (Throwable x) {
        more = false;
        synchronized (this) {
          jobs.remove(j, e);
          ready.remove(j);
        }
        j.died(Thread.currentThread().getName(), x);
      }
      synchronized (this) {
        e.running.remove(Thread.currentThread());
        if (more && jobs.get(j) == e && !e.queued) {
          e.queued = true;
          ready.addLast(j);
        }
        notifyAll();
      }
    }
  }
}
