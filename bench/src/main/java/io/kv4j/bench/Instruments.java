package io.kv4j.bench;

import io.kv4j.Stores;
import io.kv4j.bench.floor.FloorCrcProvider;
import io.kv4j.bench.floor.FloorProvider;
import io.kv4j.bench.peers.ChronicleMapProvider;
import io.kv4j.bench.peers.MapDbProvider;
import io.kv4j.bench.peers.MvStoreProvider;
import io.kv4j.bench.raw.LmdbRawProvider;
import io.kv4j.bench.raw.RocksDbRawProvider;
import io.kv4j.bench.raw.SqliteRawProvider;
import io.kv4j.spi.StoreProvider;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The bench's own measuring instruments: the peer stores' adapters (MapDB, H2 MVStore, Chronicle
 * Map), the raw libraries of {@code --abstraction} and the floor read ceilings. They are providers
 * the bench opens by id like any engine, but they are listed here and in no {@code
 * META-INF/services} file: the engine registry of {@link Stores} is every application's, and an
 * application with the bench jar on its class path must not find a MapDB adapter among its engines,
 * nor open one by URI. The bench resolves an id here first, then in that registry.
 */
public final class Instruments {
  private Instruments() {}

  /** Made once, on first use, as the registry makes its engines: providers are stateless. */
  private static final class Found {
    static final Map<String, StoreProvider> BY_ID = byId();

    private static Map<String, StoreProvider> byId() {
      Map<String, StoreProvider> m = new TreeMap<>();
      for (StoreProvider p :
          List.of(
              new MapDbProvider(),
              new MvStoreProvider(),
              new ChronicleMapProvider(),
              new RocksDbRawProvider(),
              new LmdbRawProvider(),
              new SqliteRawProvider(),
              new FloorProvider(),
              new FloorCrcProvider())) {
        m.put(p.id(), p);
      }
      return m;
    }
  }

  /**
   * The engine with an id: the bench's instrument of that id, else the engine registry's.
   *
   * @param id the engine id or alias, any case
   * @return the provider
   * @throws IllegalArgumentException if neither has it; the message lists every id the bench can
   *     open, as {@link Stores#provider(String)}'s does for the registry
   */
  public static StoreProvider provider(String id) {
    StoreProvider own = Found.BY_ID.get(id.trim().toLowerCase(java.util.Locale.ROOT));
    if (own != null) {
      return own;
    }
    try {
      return Stores.provider(id);
    } catch (IllegalArgumentException unknown) {
      // The registry lists its own ids; the bench can open its instruments too.
      String registry = "available: " + String.join(", ", names(Stores.providers()));
      String message = String.valueOf(unknown.getMessage());
      if (!message.contains(registry)) {
        throw unknown;
      }
      throw new IllegalArgumentException(
          message.replace(registry, "available: " + String.join(", ", names(all()))), unknown);
    }
  }

  /**
   * Whether a provider is one of the bench's instruments rather than an engine of the registry.
   *
   * @param p the provider
   * @return true for an instrument
   */
  static boolean contains(StoreProvider p) {
    return Found.BY_ID.get(p.id()) == p;
  }

  /**
   * Every engine the bench can open, sorted by id: the instruments and the registry's engines.
   *
   * @return the providers
   */
  static List<StoreProvider> all() {
    List<StoreProvider> out = new ArrayList<>(Stores.providers());
    out.addAll(Found.BY_ID.values());
    out.sort(Comparator.comparing(StoreProvider::id));
    return List.copyOf(out);
  }

  /** Every id and alias, sorted, as the registry's message lists them. */
  private static List<String> names(List<StoreProvider> providers) {
    List<String> names = new ArrayList<>();
    for (StoreProvider p : providers) {
      names.add(p.id());
      names.addAll(p.aliases());
    }
    names.sort(Comparator.naturalOrder());
    return names;
  }
}
