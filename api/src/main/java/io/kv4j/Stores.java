package io.kv4j;

import io.kv4j.spi.StoreProvider;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.TreeMap;

/**
 * Opens stores by configuration. Engines are found once, on first use, with {@link ServiceLoader}
 * from the class loader that loaded kv4j: put an engine's artifact on the classpath (or module
 * path) and its id becomes valid.
 *
 * <pre>{@code
 * try (Store store = Stores.open("lmdb:/var/lib/app/data?durability=buffered")) {
 *   store.put(key, value);
 * }
 * }</pre>
 */
public final class Stores {
  /**
   * Which artifact provides each engine id and alias kv4j ships, for the unknown-engine message:
   * the one list of them (the CLI's tests check it covers every provider on its classpath, which
   * holds every engine module).
   */
  private static final Map<String, String> ARTIFACTS =
      Map.ofEntries(
          Map.entry("hashlog", "io.kv4j:kv4j-engine-hashlog"),
          Map.entry("rocksdb", "io.kv4j:kv4j-engine-lsm"),
          Map.entry("lsm", "io.kv4j:kv4j-engine-lsm"),
          Map.entry("lmdb", "io.kv4j:kv4j-engine-btree"),
          Map.entry("btree", "io.kv4j:kv4j-engine-btree"),
          Map.entry("sqlite", "io.kv4j:kv4j-engine-sqlite"),
          Map.entry("postgres", "io.kv4j:kv4j-engine-jdbc"),
          Map.entry("mysql", "io.kv4j:kv4j-engine-jdbc"),
          Map.entry("mariadb", "io.kv4j:kv4j-engine-jdbc"),
          Map.entry("redis", "io.kv4j:kv4j-engine-redis"),
          Map.entry("redis-sharded", "io.kv4j:kv4j-engine-redis"),
          Map.entry("etcd", "io.kv4j:kv4j-engine-etcd"),
          Map.entry("memory", "io.kv4j:kv4j-api"));

  private Stores() {}

  /**
   * Opens a store with the engine of its config ({@link StoreConfig#provider()}): the one found
   * here for its id, or the one the config was given.
   *
   * @param config what to open
   * @return the open store
   */
  public static Store open(StoreConfig config) {
    Objects.requireNonNull(config, "config");
    return config.provider().open(config);
  }

  /**
   * Parses a URI with {@link StoreConfig#parse(String)} and opens the store.
   *
   * @param uri such as {@code hashlog:/var/lib/app/data?durability=sync}
   * @return the open store
   */
  public static Store open(String uri) {
    return open(StoreConfig.parse(uri));
  }

  /**
   * The engines found, sorted by id.
   *
   * @return the providers
   */
  public static List<StoreProvider> providers() {
    return Registry.PROVIDERS;
  }

  /**
   * The engine with an id or alias.
   *
   * @param id the id or alias, any case
   * @return the provider
   * @throws IllegalArgumentException if no engine has that id; the message lists the available ids
   *     and which artifact provides the one asked for
   */
  public static StoreProvider provider(String id) {
    Objects.requireNonNull(id, "engine id");
    String key = id.trim().toLowerCase(Locale.ROOT);
    StoreProvider p = Registry.BY_ID.get(key);
    if (p != null) {
      return p;
    }
    String hint = ARTIFACTS.get(key);
    throw new IllegalArgumentException(
        "unknown engine '"
            + id
            + "'; available: "
            + String.join(", ", Registry.BY_ID.keySet())
            + (hint == null
                ? ""
                : ". Engine '" + key + "' is provided by " + hint + ": add it to the classpath"));
  }

  /** Loaded on first use, once: the JVM's class-init lock makes this thread-safe. */
  private static final class Registry {
    static final Map<String, StoreProvider> BY_ID;
    static final List<StoreProvider> PROVIDERS;

    static {
      Map<String, StoreProvider> byId = new TreeMap<>();
      List<StoreProvider> all = new ArrayList<>();
      for (StoreProvider p :
          ServiceLoader.load(StoreProvider.class, Stores.class.getClassLoader())) {
        all.add(p);
        List<String> names = new ArrayList<>();
        names.add(p.id());
        names.addAll(p.aliases());
        for (String name : names) {
          if (!name.matches("[a-z][a-z0-9-]*")) {
            throw new IllegalStateException(
                "engine " + p.getClass().getName() + " has invalid id '" + name + "'");
          }
          StoreProvider other = byId.putIfAbsent(name, p);
          if (other != null) {
            throw new IllegalStateException(
                "two engines claim the id '"
                    + name
                    + "': "
                    + other.getClass().getName()
                    + " and "
                    + p.getClass().getName()
                    + "; remove one from the classpath");
          }
        }
      }
      all.sort(Comparator.comparing(StoreProvider::id));
      BY_ID = byId;
      PROVIDERS = List.copyOf(all);
    }
  }
}
