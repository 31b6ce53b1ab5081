package io.kv4j.bench;

import io.kv4j.Feature;
import io.kv4j.Stores;
import io.kv4j.bench.floor.FloorCrcProvider;
import io.kv4j.bench.floor.FloorProvider;
import io.kv4j.spi.OptionSpec;
import io.kv4j.spi.StoreProvider;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/** Which engines a run compares, and the {@code --list} of those found. */
final class Engines {
  private Engines() {}

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
      for (StoreProvider p : Stores.providers()) {
        if ((o.abstraction || !Abstraction.isRaw(p.id()))
            && !Servers.isServer(p.id())
            && !p.id().equals(FloorProvider.ID)
            && !p.id().equals(FloorCrcProvider.ID)) {
          out.add(p);
        }
      }
    } else {
      for (String id : o.engines) {
        StoreProvider p = Stores.provider(id);
        if (!out.contains(p)) {
          out.add(p);
        }
      }
    }
    if (o.servers) {
      for (StoreProvider p : Stores.providers()) {
        if (Servers.isServer(p.id()) && !out.contains(p)) {
          out.add(p);
        }
      }
    }
    return out;
  }

  /**
   * Prints every engine found, with its aliases, features and options.
   *
   * @param out where to
   */
  static void list(PrintStream out) {
    for (StoreProvider p : Stores.providers()) {
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
