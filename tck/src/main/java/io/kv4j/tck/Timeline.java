package io.kv4j.tck;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Renders operations of a {@link History} for a failure message: one line per operation, in the
 * order of invocation, with its client, its invocation and return in milliseconds since the history
 * started, and what it asked and was answered, e.g.
 *
 * <pre>
 *      #41  t3    12.301    12.312  put "e4/k2" := "t3#17"
 *      #57  t1    12.350    12.360  get "e4/k2" -&gt; "t0#4"   &lt;-- no order explains this
 * </pre>
 *
 * A failing prefix may hold hundreds of operations; the timeline shows the operation that ends it,
 * those overlapping it, the last {@value #TAIL} before it and the operations that wrote the values
 * it read or compared, and says how many earlier ones it leaves out.
 */
final class Timeline {
  /** How many operations before the culprit the timeline shows at least. */
  static final int TAIL = 24;

  private Timeline() {}

  /**
   * The tail of a failing prefix.
   *
   * @param prefix the prefix's operations
   * @param partition all operations of the prefix's partition (for the writers of what the culprit
   *     saw, which may have been invoked after the prefix)
   * @param culprit the operation whose return ends it
   * @param pending the ids of operations that returned after the prefix (shown with a {@code *})
   * @param start the history's start (nanoTime)
   * @return the timeline, lines ending with a newline
   */
  static String render(
      List<Operation> prefix,
      List<Operation> partition,
      Operation culprit,
      Set<Integer> pending,
      long start) {
    List<Operation> byReturn = new ArrayList<>(prefix);
    byReturn.sort(Comparator.comparingLong(Operation::returned));
    Set<Operation> shown = new LinkedHashSet<>();
    shown.add(culprit);
    int before = 0;
    for (int i = byReturn.size() - 1; i >= 0; i--) {
      Operation o = byReturn.get(i);
      if (o.returned() <= culprit.returned() && before < TAIL) {
        shown.add(o);
        before++;
      }
      if (o.invoked() <= culprit.returned() && o.returned() >= culprit.invoked()) {
        shown.add(o); // overlapping the culprit
      }
    }
    Set<Operation> later = new LinkedHashSet<>(); // writers invoked after the prefix ended
    List<Operation.Cell> seen = new ArrayList<>(culprit.reads());
    seen.addAll(culprit.conditions());
    Set<Operation> inPrefix = new java.util.HashSet<>(prefix);
    List<Operation> all = new ArrayList<>(partition);
    all.sort(Comparator.comparingLong(Operation::invoked));
    for (Operation.Cell c : seen) {
      if (c.value() == null) {
        continue;
      }
      for (int i = all.size() - 1, found = 0; i >= 0 && found < 2; i--) {
        Operation o = all.get(i);
        for (Operation.Cell w : o.writes()) {
          if (Arrays.equals(w.key(), c.key()) && Arrays.equals(w.value(), c.value())) {
            shown.add(o); // who wrote what the culprit saw
            if (!inPrefix.contains(o)) {
              later.add(o);
            }
            found++;
            break;
          }
        }
      }
    }
    List<Operation> lines = new ArrayList<>(shown);
    lines.sort(Comparator.comparingLong(Operation::invoked).thenComparingInt(Operation::id));
    StringBuilder out = new StringBuilder();
    int left = prefix.size() - (lines.size() - later.size());
    out.append("  (times in ms since the history started; ")
        .append(left > 0 ? left + " earlier operations of the prefix not shown; " : "")
        .append("* returned after the prefix, so pending in it; ? threw: indeterminate")
        .append(later.isEmpty() ? "" : "; + invoked after the prefix: it wrote what #")
        .append(later.isEmpty() ? "" : culprit.id() + " saw, too late to explain it")
        .append(")\n");
    out.append(
        String.format(
            Locale.ROOT,
            "  %6s  %-6s %10s %10s  %s%n",
            "#",
            "client",
            "invoked",
            "returned",
            "operation"));
    for (Operation o : lines) {
      out.append(
          String.format(
              Locale.ROOT,
              "  %6s  %-6s %10s %10s  %s%s%n",
              "#" + o.id(),
              "t" + o.client(),
              millis(o.invoked(), start),
              (o.indeterminate() ? "?" : millis(o.returned(), start))
                  + (pending.contains(o.id()) ? "*" : later.contains(o) ? "+" : ""),
              describe(o),
              o == culprit ? "   <-- no order explains this answer" : ""));
    }
    return out.toString();
  }

  private static String millis(long t, long start) {
    return String.format(Locale.ROOT, "%.3f", (t - start) / 1e6);
  }

  /**
   * One operation as text: {@code get "k" -> "v"}, {@code put "k" := "v"}, {@code replace "k" ==
   * "a" := "b" -> true}, {@code write {"a" := "1", "b" deleted}}, {@code snapshot getAll {"a" ->
   * "1", "b" -> absent}}.
   */
  static String describe(Operation o) {
    StringBuilder s = new StringBuilder(o.name());
    if (!o.conditions().isEmpty()) {
      List<String> cs = new ArrayList<>();
      for (Operation.Cell c : o.conditions()) {
        cs.add(key(c) + (c.value() == null ? " absent" : " == " + value(c.value())));
      }
      s.append(o.conditions().size() > 1 || o.writes().size() > 1 ? " if [" : " ")
          .append(String.join(", ", cs))
          .append(o.conditions().size() > 1 || o.writes().size() > 1 ? "]" : "");
    }
    if (!o.writes().isEmpty()) {
      List<String> ws = new ArrayList<>();
      for (Operation.Cell c : o.writes()) {
        boolean sameKey = o.conditions().size() == 1 && o.writes().size() == 1;
        ws.add(
            (sameKey ? "" : key(c) + " ")
                + (c.value() == null ? "deleted" : ":= " + value(c.value())));
      }
      boolean many = o.writes().size() > 1;
      s.append(many ? " {" : " ").append(String.join(", ", ws)).append(many ? "}" : "");
    }
    if (!o.reads().isEmpty()) {
      List<String> rs = new ArrayList<>();
      for (Operation.Cell c : o.reads()) {
        rs.add(key(c) + " -> " + (o.indeterminate() ? "?" : value(c.value())));
      }
      boolean many = o.reads().size() > 1;
      s.append(many ? " {" : " ").append(String.join(", ", rs)).append(many ? "}" : "");
    }
    if (o.answer() != null) {
      s.append(" -> ").append(o.answer());
    } else if (!o.conditions().isEmpty() && o.indeterminate()) {
      s.append(" -> ?");
    }
    if (o.failure() != null) {
      s.append("  threw ").append(o.failure());
    }
    return s.toString();
  }

  /** The keys of a partition, for a message. */
  static String keys(List<RegisterModel.Key> keys) {
    java.util.TreeSet<String> names = new java.util.TreeSet<>();
    for (RegisterModel.Key k : keys) {
      ByteBuffer b = k.bytes().duplicate();
      byte[] bytes = new byte[b.remaining()];
      b.get(bytes);
      names.add((k.keyspace() == null ? "" : k.keyspace() + ":") + text(bytes));
    }
    return (keys.size() == 1 ? "key " : "keys ") + String.join(", ", names);
  }

  private static String key(Operation.Cell c) {
    return (c.keyspace() == null ? "" : c.keyspace() + ":") + text(c.key());
  }

  private static String value(byte[] v) {
    return v == null ? "absent" : text(v);
  }

  /** Printable ASCII in quotes, else hex (the first 16 bytes and the length when longer). */
  static String text(byte[] b) {
    boolean printable = b.length <= 48;
    for (int i = 0; i < b.length && printable; i++) {
      printable = b[i] >= 0x20 && b[i] < 0x7f && b[i] != '"';
    }
    if (printable) {
      return "\"" + new String(b, java.nio.charset.StandardCharsets.US_ASCII) + "\"";
    }
    String hex = java.util.HexFormat.of().formatHex(b, 0, Math.min(b.length, 16));
    return "0x" + hex + (b.length > 16 ? "...(" + b.length + " bytes)" : "");
  }
}
