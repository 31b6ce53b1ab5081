package io.kv4j.bench;

import io.kv4j.Feature;
import io.kv4j.bench.floor.FloorCrcProvider;
import io.kv4j.bench.floor.FloorProvider;
import io.kv4j.spi.OptionSpec;
import io.kv4j.spi.StoreProvider;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Which engines a run compares, what each is to a user (a kv4j engine they can pick, or a store
 * measured only for comparison), and the {@code --list} of those found.
 */
final class Engines {
  private Engines() {}

  /**
   * What an engine of the run is to a user. Only a {@link #KV4J} engine ships in a kv4j artifact a
   * user can depend on, so only those are ranked and advised; the others are measured beside them
   * for reference and shown apart (after them, marked) in every table, chart and advice line.
   */
  enum Role {
    /** An engine of a kv4j artifact: its provider lives outside the bench module. */
    KV4J("kv4j engine", ""),
    /** A peer store's adapter (Chronicle Map, MapDB, H2 MVStore): the bench's own, no artifact. */
    PEER("peer, not a kv4j engine", "peer"),
    /** A library used directly ({@code --abstraction}'s baselines). */
    RAW("raw library, not a kv4j engine", "raw library"),
    /** A bench instrument (the read ceilings) or a test engine: not a store to pick. */
    INSTRUMENT("bench instrument, not a kv4j engine", "instrument");

    private final String words;
    private final String tag;

    Role(String words, String tag) {
      this.words = words;
      this.tag = tag;
    }

    /**
     * What it is, in words for a table's engine cell.
     *
     * @return such as {@code peer, not a kv4j engine}
     */
    String words() {
      return words;
    }

    /**
     * A short tag for a chart's label, empty for kv4j engines.
     *
     * @return such as {@code peer}
     */
    String tag() {
      return tag;
    }

    /**
     * Whether a user can pick it: a kv4j engine.
     *
     * @return true for {@link #KV4J}
     */
    boolean pickable() {
      return this == KV4J;
    }
  }

  private static final String BENCH_PACKAGE = Engines.class.getPackageName();

  /**
   * What a provider is, from where its class lives: in the bench's peers or raw package, elsewhere
   * in the bench (instruments, test engines), or outside it (a kv4j engine).
   *
   * @param p the provider
   * @return its role
   */
  static Role role(StoreProvider p) {
    String pkg = p.getClass().getPackageName();
    if (pkg.equals(BENCH_PACKAGE + ".peers")) {
      return Role.PEER;
    }
    if (pkg.equals(BENCH_PACKAGE + ".raw")) {
      return Role.RAW;
    }
    if (pkg.equals(BENCH_PACKAGE) || pkg.startsWith(BENCH_PACKAGE + ".")) {
      return Role.INSTRUMENT;
    }
    return Role.KV4J;
  }

  /**
   * What an engine id is, looked up among the providers found; an id no provider has (a hand-made
   * row of a test) counts as a kv4j engine.
   *
   * @param id the engine id
   * @return its role
   */
  static Role role(String id) {
    StoreProvider p = Found.BY_ID.get(id);
    return p == null ? Role.KV4J : role(p);
  }

  /**
   * An engine's name in a table: the id, and for a store that is not a kv4j engine, the id in
   * italics (markdown) with what it is.
   *
   * @param id the engine id
   * @param markdown true for report.md, false for the console
   * @return such as {@code *mapdb* (peer, not a kv4j engine)} or {@code mapdb (peer)}
   */
  static String label(String id, boolean markdown) {
    Role r = role(id);
    if (r.pickable()) {
      return id;
    }
    return markdown ? "*" + id + "* (" + r.words() + ")" : id + " (" + r.tag() + ")";
  }

  /** The providers found (the registry's and the bench's instruments), by id: read once. */
  private static final class Found {
    static final Map<String, StoreProvider> BY_ID = byId();

    private static Map<String, StoreProvider> byId() {
      Map<String, StoreProvider> m = new HashMap<>();
      for (StoreProvider p : Instruments.all()) {
        m.put(p.id(), p);
      }
      return m;
    }
  }

  /**
   * The engines of a run: those named by {@code --engines}, else every embedded one found (the raw
   * baselines only with {@code --abstraction}, never the floor instruments); the server engines too
   * with {@code --servers}.
   *
   * @param o the options
   * @return the engines, in order
   * @throws IllegalArgumentException naming an unknown engine and the available ones
   */
  static List<StoreProvider> select(Options o) {
    List<StoreProvider> out = new ArrayList<>();
    if (o.engines.isEmpty()) {
      // The raw baselines (rocksdb-raw, ...) only with --abstraction, next to their engine; the
      // server engines only with --servers (the default run never contacts a server); the floor
      // read ceilings only when named.
      for (StoreProvider p : Instruments.all()) {
        if ((o.abstraction || !Abstraction.isRaw(p.id()))
            && !Servers.isServer(p.id())
            && !p.id().equals(FloorProvider.ID)
            && !p.id().equals(FloorCrcProvider.ID)) {
          out.add(p);
        }
      }
    } else {
      for (String id : o.engines) {
        StoreProvider p = Instruments.provider(id);
        if (!out.contains(p)) {
          out.add(p);
        }
      }
    }
    if (o.servers) {
      for (StoreProvider p : Instruments.all()) {
        if (Servers.isServer(p.id()) && !out.contains(p)) {
          out.add(p);
        }
      }
    }
    return out;
  }

  /**
   * Prints every engine found (the registry's and the bench's instruments), with its aliases,
   * features and options.
   *
   * @param out where to
   */
  static void list(PrintStream out) {
    for (StoreProvider p : Instruments.all()) {
      out.printf(
          "%s%s - %s%n  features: %s%n",
          p.id(),
          p.aliases().isEmpty() ? "" : " (aliases " + String.join(", ", p.aliases()) + ")",
          p.description(),
          p.features().stream().map(Feature::name).sorted().collect(Collectors.joining(", ")));
      for (OptionSpec<?> s : p.options()) {
        out.printf(
            "  %s (%s, default %s %s): %s%n",
            s.name(), s.type(), s.defaultValue(), s.unit(), s.description());
      }
    }
  }
}
