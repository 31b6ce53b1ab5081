package io.kv4j.bench;

import com.sun.management.GarbageCollectionNotificationInfo;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.management.ListenerNotFoundException;
import javax.management.Notification;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;

/**
 * The garbage collector's stop-the-world pauses while it is open, from the JVM's GC notifications
 * (each collection's {@code GcInfo} id and duration), so that a phase can ask for the pauses
 * between two {@link #mark marks} ({@link #between}). A mark is each collector's collection count,
 * and a collection's {@code GcInfo} id is that count after it, so a phase's collections are told
 * apart exactly; {@code GcInfo}'s start time would not do, its clock starts some tens of ms away
 * from the runtime's uptime. Left out: collections the program asked for ({@code System.gc()},
 * which the bench calls itself to read a settled heap), and the cycles of concurrent collectors (a
 * bean named {@code ... Cycles}, an action naming {@code concurrent}), whose duration is not a
 * pause. Notifications arrive on a JMX thread some time after the collection: {@link #between}
 * first waits (up to a second) until the collections up to its second mark have been delivered.
 */
final class GcPauses implements AutoCloseable {
  /** One collection: its collector, its id (that collector's count after it), its length. */
  record Pause(String collector, long id, long durationMillis) {}

  /** Each collector's collection count at a moment. */
  record Mark(Map<String, Long> counts) {
    long of(String collector) {
      return counts.getOrDefault(collector, 0L);
    }
  }

  /**
   * The pauses of a window: count, sum and longest, in ms.
   *
   * @param count pauses
   * @param totalMillis their sum
   * @param maxMillis the longest
   */
  record Summary(int count, long totalMillis, long maxMillis) {
    /** Figures named {@code prefix-gc-pauses}, {@code -gc-pause-total-ms}, {@code -max-ms}. */
    void into(Map<String, Double> figures, String prefix) {
      figures.put(prefix + "-gc-pauses", (double) count);
      figures.put(prefix + "-gc-pause-total-ms", (double) totalMillis);
      figures.put(prefix + "-gc-pause-max-ms", (double) maxMillis);
    }

    @Override
    public String toString() {
      return String.format(
          Locale.ROOT, "%d GC pauses, %d ms total, max %d ms", count, totalMillis, maxMillis);
    }
  }

  private final List<NotificationEmitter> emitters = new ArrayList<>();
  private final NotificationListener listener = this::notified;
  private final List<Pause> pauses = new ArrayList<>(); // guarded by this
  // Highest id delivered per collector, the program's collections included; guarded by this.
  private final Map<String, Long> delivered = new HashMap<>();

  /** Starts listening to every collector that emits notifications. */
  GcPauses() {
    for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
      if (b instanceof NotificationEmitter e) {
        e.addNotificationListener(listener, null, null);
        emitters.add(e);
      }
    }
  }

  /** Each collector's collection count now. */
  static Mark mark() {
    Map<String, Long> m = new HashMap<>();
    for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
      m.put(b.getName(), Math.max(0, b.getCollectionCount()));
    }
    return new Mark(Map.copyOf(m));
  }

  private void notified(Notification n, Object handback) {
    if (!GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(n.getType())) {
      return;
    }
    GarbageCollectionNotificationInfo info =
        GarbageCollectionNotificationInfo.from((CompositeData) n.getUserData());
    Pause p = new Pause(info.getGcName(), info.getGcInfo().getId(), info.getGcInfo().getDuration());
    synchronized (this) {
      delivered.merge(p.collector(), p.id(), Math::max);
      if (isPause(p.collector(), info.getGcAction(), info.getGcCause())) {
        pauses.add(p);
      }
      notifyAll();
    }
  }

  /** Whether a collection counts as a pause of the program (see the class comment). */
  static boolean isPause(String collector, String action, String cause) {
    String a = action.toLowerCase(Locale.ROOT);
    return !"System.gc()".equals(cause)
        && !collector.endsWith("Cycles")
        && !a.contains("concurrent");
  }

  /**
   * The pauses among the collections after {@code from} up to {@code to}, after waiting up to a
   * second for their notifications.
   */
  Summary between(Mark from, Mark to) {
    return between(from, to, TimeUnit.SECONDS.toNanos(1));
  }

  /**
   * The pauses among the collections after {@code from} up to {@code to}, after waiting up to
   * {@code waitNanos} for their notifications (they come on another thread, late on a loaded
   * machine); returns as soon as they have all arrived.
   */
  Summary between(Mark from, Mark to, long waitNanos) {
    long deadline = System.nanoTime() + waitNanos;
    synchronized (this) {
      while (!emitters.isEmpty() && !deliveredUpTo(to)) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          break; // some bean counts collections it does not notify: take what arrived
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(this, left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
      return summarise(pauses, from, to);
    }
  }

  private boolean deliveredUpTo(Mark to) {
    for (Map.Entry<String, Long> e : to.counts().entrySet()) {
      if (e.getValue() > 0 && delivered.getOrDefault(e.getKey(), 0L) < e.getValue()) {
        return false;
      }
    }
    return true;
  }

  /** The pauses of {@code all} among the collections after {@code from} up to {@code to}. */
  static Summary summarise(List<Pause> all, Mark from, Mark to) {
    int count = 0;
    long total = 0;
    long max = 0;
    for (Pause p : all) {
      if (p.id() > from.of(p.collector()) && p.id() <= to.of(p.collector())) {
        count++;
        total += p.durationMillis();
        max = Math.max(max, p.durationMillis());
      }
    }
    return new Summary(count, total, max);
  }

  /** The collectors' names, for the log. */
  static String collectors() {
    List<String> names = new ArrayList<>();
    for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
      names.add(b.getName());
    }
    return String.join(", ", names);
  }

  @Override
  public void close() {
    for (NotificationEmitter e : emitters) {
      try {
        e.removeNotificationListener(listener);
      } catch (ListenerNotFoundException ignored) {
        // Not registered after all: nothing to remove.
      }
    }
    synchronized (this) {
      emitters.clear();
      notifyAll();
    }
  }
}
