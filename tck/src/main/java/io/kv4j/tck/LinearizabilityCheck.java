package io.kv4j.tck;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Decides whether a {@link History} is linearizable: whether there is one order of its operations,
 * each taking effect at one instant between its invocation and its return, in which every answer is
 * the one the {@link RegisterModel} gives.
 *
 * <p><b>Partitions.</b> Linearizability is local (Herlihy and Wing): a history is linearizable when
 * the sub-history of each independent object is. Keys that one operation names together (a batch, a
 * snapshot read, {@code writeIf}) are one object; the history is split into the connected sets of
 * keys, and each partition is searched on its own, in the order of its first operation.
 *
 * <p><b>Search.</b> Wing and Gong's backtracking with Lowe's memo, as in Porcupine: the calls and
 * returns of a partition are a list in time order (a call before a return at the same instant, so
 * touching operations count as concurrent); the search takes the first call it can linearize — the
 * model accepts its answer and the pair (set of linearized operations, model state) was never seen
 * — lifts it and its return out of the list and starts again from the head; when it meets a return
 * whose operation is not linearized yet it undoes its last choice. The memo makes every
 * configuration cost one visit, so a partition of a few hundred operations with a handful of
 * clients in flight at once decides in milliseconds.
 *
 * <p><b>Indeterminate operations</b> (a call that threw an environmental error) return at
 * +infinity: they may be linearized anywhere after their call, or not at all, and their answer is
 * not checked; an indeterminate read is dropped, it constrains nothing. The search succeeds as soon
 * as every determinate operation is linearized.
 *
 * <p><b>Bounds.</b> One budget for the whole check, measured in the checking thread's CPU time
 * ({@link CheckClock}; wall time where the JVM cannot measure it), so that a machine busy with
 * other work slows the check but does not cut its search short: a search that spends it, or whose
 * memo exceeds {@value #MAX_CONFIGURATIONS} configurations, is undecided, and the verdict says so
 * ("could not decide in N ms of the checking thread's CPU time"), never "linearizable".
 *
 * <p><b>The smallest failing prefix.</b> For a partition that cannot be linearized, a binary search
 * over its returns finds the shortest prefix (all events up to one return) that cannot: operations
 * invoked in the prefix but returning after it count as pending (indeterminate). Prefixes are
 * monotone — a prefix of a linearizable history is linearizable — so the operation whose return
 * ends the shortest failing prefix is the first whose answer no order explains. The verdict shows
 * that prefix's tail as a timeline ({@link Timeline}).
 */
final class LinearizabilityCheck {
  /** The memo's bound: beyond it a search is undecided, rather than exhaust the heap. */
  static final int MAX_CONFIGURATIONS = 1_000_000;

  /** What one search found. */
  enum Outcome {
    LINEARIZABLE,
    NOT_LINEARIZABLE,
    UNDECIDED
  }

  private final List<Operation> ops; // the partition's, by invocation
  private final RegisterModel model;
  private final int[] eventOp; // events in time order: the operation
  private final boolean[] eventCall; // and whether it is its call (else its return)
  private long configurations; // memo size of the last search

  /**
   * @param keys the partition's keys
   * @param ops its operations, none of them an indeterminate read
   */
  LinearizabilityCheck(List<RegisterModel.Key> keys, List<Operation> ops) {
    this.ops = List.copyOf(ops);
    this.model = new RegisterModel(keys, this.ops);
    record Event(int op, boolean call, long time) {}
    List<Event> events = new ArrayList<>();
    for (int i = 0; i < this.ops.size(); i++) {
      Operation o = this.ops.get(i);
      events.add(new Event(i, true, o.invoked()));
      if (!o.indeterminate()) {
        events.add(new Event(i, false, o.returned()));
      }
    }
    events.sort(
        Comparator.comparingLong((Event e) -> e.time)
            .thenComparing(e -> !e.call) // a call before a return at the same instant
            .thenComparingInt(e -> e.op));
    eventOp = new int[events.size()];
    eventCall = new boolean[events.size()];
    for (int i = 0; i < events.size(); i++) {
      eventOp[i] = events.get(i).op;
      eventCall[i] = events.get(i).call;
    }
  }

  /**
   * Checks a whole history within {@code budget}.
   *
   * @param all the operations, in any order
   * @param start the history's start (nanoTime), for the timeline's times
   * @param budget how long the check may take, in the checking thread's CPU time ({@link
   *     CheckClock})
   * @return the verdict
   */
  static HistoryVerdict check(List<Operation> all, long start, Duration budget) {
    long began = System.nanoTime();
    long deadline = CheckClock.now() + budget.toNanos();
    List<Operation> ops = new ArrayList<>();
    for (Operation o : all) {
      if (!(o.indeterminate() && o.readOnly())) {
        ops.add(o);
      }
    }
    ops.sort(Comparator.comparingLong(Operation::invoked).thenComparingInt(Operation::id));
    Map<RegisterModel.Key, Integer> keyIds = new HashMap<>();
    List<RegisterModel.Key> keyList = new ArrayList<>();
    List<Integer> parent = new ArrayList<>();
    int[] first = new int[ops.size()];
    for (int i = 0; i < ops.size(); i++) {
      int root = -1;
      for (Operation.Cell c : cells(ops.get(i))) {
        RegisterModel.Key k = RegisterModel.Key.of(c);
        Integer id = keyIds.get(k);
        if (id == null) {
          id = keyList.size();
          keyIds.put(k, id);
          keyList.add(k);
          parent.add(id);
        }
        int r = find(parent, id);
        if (root < 0) {
          root = r;
        } else if (r != root) {
          parent.set(r, root);
        }
      }
      first[i] = root;
    }
    Map<Integer, List<Operation>> byRoot = new LinkedHashMap<>();
    for (int i = 0; i < ops.size(); i++) {
      byRoot.computeIfAbsent(find(parent, first[i]), r -> new ArrayList<>()).add(ops.get(i));
    }
    Map<Integer, List<RegisterModel.Key>> keysOf = new HashMap<>();
    for (int k = 0; k < keyList.size(); k++) {
      keysOf.computeIfAbsent(find(parent, k), r -> new ArrayList<>()).add(keyList.get(k));
    }
    int partition = 0;
    int largest = 0;
    long searched = 0;
    for (Map.Entry<Integer, List<Operation>> p : byRoot.entrySet()) {
      partition++;
      List<RegisterModel.Key> keys = keysOf.get(p.getKey());
      LinearizabilityCheck c = new LinearizabilityCheck(keys, p.getValue());
      largest = Math.max(largest, p.getValue().size());
      Outcome o = c.search(c.eventOp.length, deadline);
      searched = Math.max(searched, c.configurations);
      if (o == Outcome.UNDECIDED) {
        return HistoryVerdict.undecided(
            all.size(),
            byRoot.size(),
            System.nanoTime() - began,
            "could not decide in "
                + budget.toMillis()
                + " ms "
                + CheckClock.measured()
                + " ("
                + (System.nanoTime() - began) / 1_000_000
                + " ms of wall time) whether the history of "
                + all.size()
                + " operations is linearizable: partition "
                + partition
                + " of "
                + byRoot.size()
                + " ("
                + Timeline.keys(keys)
                + ", "
                + p.getValue().size()
                + " operations) was still undecided after "
                + c.configurations
                + " configurations (make the history shorter, or give the check more time)",
            searched);
      }
      if (o == Outcome.NOT_LINEARIZABLE) {
        return c.explainFailure(
            all.size(), byRoot.size(), partition, start, began, deadline, searched);
      }
    }
    return HistoryVerdict.linearizable(
        all.size(),
        byRoot.size(),
        System.nanoTime() - began,
        "linearizable: "
            + all.size()
            + " operations in "
            + byRoot.size()
            + " independent partitions (the largest "
            + largest
            + " operations), decided in "
            + (System.nanoTime() - began) / 1_000_000
            + " ms (the largest search "
            + searched
            + " configurations)",
        searched);
  }

  private static List<Operation.Cell> cells(Operation o) {
    List<Operation.Cell> all = new ArrayList<>(o.reads());
    all.addAll(o.conditions());
    all.addAll(o.writes());
    return all;
  }

  private static int find(List<Integer> parent, int i) {
    while (parent.get(i) != i) {
      parent.set(i, parent.get(parent.get(i)));
      i = parent.get(i);
    }
    return i;
  }

  /** The verdict for this partition, which cannot be linearized: its shortest failing prefix. */
  private HistoryVerdict explainFailure(
      int total,
      int partitions,
      int partition,
      long start,
      long began,
      long deadline,
      long searched) {
    List<Integer> returns = new ArrayList<>();
    for (int e = 0; e < eventOp.length; e++) {
      if (!eventCall[e]) {
        returns.add(e);
      }
    }
    int lo = 0;
    int hi = returns.size() - 1; // the whole history fails
    boolean shortest = true;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      Outcome o = search(returns.get(mid) + 1, deadline);
      if (o == Outcome.NOT_LINEARIZABLE) {
        hi = mid;
      } else if (o == Outcome.LINEARIZABLE) {
        lo = mid + 1;
      } else {
        shortest = false; // out of time: the prefix found so far still fails
        break;
      }
    }
    int end = returns.get(hi) + 1;
    Operation culprit = ops.get(eventOp[end - 1]);
    List<Operation> prefix = new ArrayList<>();
    Set<Integer> pending = new HashSet<>();
    boolean[] returned = new boolean[ops.size()];
    for (int e = 0; e < end; e++) {
      if (eventCall[e]) {
        prefix.add(ops.get(eventOp[e]));
      } else {
        returned[eventOp[e]] = true;
      }
    }
    for (int e = 0; e < end; e++) {
      if (eventCall[e] && !returned[eventOp[e]] && !ops.get(eventOp[e]).indeterminate()) {
        pending.add(ops.get(eventOp[e]).id()); // in the prefix, returned after it
      }
    }
    String text =
        "not linearizable: "
            + Timeline.keys(model.keys())
            + " (partition "
            + partition
            + " of "
            + partitions
            + ", "
            + ops.size()
            + " operations): "
            + (shortest
                ? "the shortest prefix"
                : "a prefix (the check ran out of time shortening it)")
            + " of its history that cannot be linearized holds "
            + prefix.size()
            + (prefix.size() == 1 ? " operation" : " operations")
            + " and ends when #"
            + culprit.id()
            + " returned: no order of them, each taking effect at one instant between its"
            + " invocation and its return, gives #"
            + culprit.id()
            + " its answer.\n"
            + Timeline.render(prefix, ops, culprit, pending, start);
    return HistoryVerdict.notLinearizable(
        total, partitions, System.nanoTime() - began, text, searched);
  }

  /** One call or return in the search's list. */
  private static final class Entry {
    final int op;
    final boolean call;
    Entry match; // a call's return; null for an operation pending or indeterminate
    Entry prev;
    Entry next;

    Entry(int op, boolean call) {
      this.op = op;
      this.call = call;
    }
  }

  /** A memo entry: which operations are linearized, and the state they leave. */
  private static final class Config {
    final long[] linearized;
    final int[] state;
    final int hash;

    Config(long[] linearized, int[] state) {
      this.linearized = linearized;
      this.state = state;
      this.hash = 31 * Arrays.hashCode(linearized) + Arrays.hashCode(state);
    }

    @Override
    public int hashCode() {
      return hash;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Config c
          && c.hash == hash
          && Arrays.equals(c.linearized, linearized)
          && Arrays.equals(c.state, state);
    }
  }

  /**
   * Searches the prefix of the first {@code events} events: the operations whose call is in it;
   * those whose return is not (or that are indeterminate) are optional and unchecked. Undecided
   * once {@link CheckClock#now()} passes {@code deadline}.
   */
  Outcome search(int events, long deadline) {
    int n = ops.size();
    Entry head = new Entry(-1, false);
    Entry tail = head;
    Entry[] calls = new Entry[n];
    boolean[] checked = new boolean[n];
    int mustLinearize = 0;
    for (int e = 0; e < events; e++) {
      Entry x = new Entry(eventOp[e], eventCall[e]);
      if (x.call) {
        calls[x.op] = x;
      } else {
        calls[x.op].match = x;
        checked[x.op] = true;
        mustLinearize++;
      }
      tail.next = x;
      x.prev = tail;
      tail = x;
    }
    configurations = 0;
    if (mustLinearize == 0) {
      return Outcome.LINEARIZABLE;
    }
    Set<Config> memo = new HashSet<>();
    Entry[] stackEntry = new Entry[n];
    int[][] stackState = new int[n][];
    int depth = 0;
    long[] linearized = new long[(n + 63) / 64];
    int[] state = model.initial();
    Entry e = head.next;
    for (long steps = 1; ; steps++) {
      if ((steps & 255) == 0 && CheckClock.now() - deadline > 0) {
        configurations = memo.size();
        return Outcome.UNDECIDED;
      }
      if (e != null && e.call) {
        int[] next = model.step(state, e.op, checked[e.op]);
        if (next != null) {
          long[] with = linearized.clone();
          with[e.op >>> 6] |= 1L << e.op;
          if (memo.add(new Config(with, next))) {
            if (memo.size() > MAX_CONFIGURATIONS) {
              configurations = memo.size();
              return Outcome.UNDECIDED;
            }
            stackEntry[depth] = e;
            stackState[depth++] = state;
            state = next;
            linearized = with;
            lift(e);
            if (checked[e.op] && --mustLinearize == 0) {
              configurations = memo.size();
              return Outcome.LINEARIZABLE;
            }
            e = head.next;
            continue;
          }
        }
        e = e.next;
        continue;
      }
      // A return whose operation is not linearized (or the end): undo the last choice.
      if (depth == 0) {
        configurations = memo.size();
        return Outcome.NOT_LINEARIZABLE;
      }
      Entry undo = stackEntry[--depth];
      state = stackState[depth];
      stackEntry[depth] = null;
      stackState[depth] = null;
      linearized = linearized.clone();
      linearized[undo.op >>> 6] &= ~(1L << undo.op);
      if (checked[undo.op]) {
        mustLinearize++;
      }
      unlift(undo);
      e = undo.next;
    }
  }

  private static void lift(Entry call) {
    unlink(call);
    if (call.match != null) {
      unlink(call.match);
    }
  }

  private static void unlink(Entry x) {
    x.prev.next = x.next;
    if (x.next != null) {
      x.next.prev = x.prev;
    }
  }

  private static void unlift(Entry call) {
    if (call.match != null) {
      relink(call.match);
    }
    relink(call);
  }

  private static void relink(Entry x) {
    x.prev.next = x;
    if (x.next != null) {
      x.next.prev = x;
    }
  }
}
