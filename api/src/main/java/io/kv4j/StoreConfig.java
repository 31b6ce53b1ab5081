package io.kv4j;

import io.kv4j.spi.OptionSpec;
import io.kv4j.spi.StoreProvider;
import java.io.IOException;
import java.io.Reader;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Which engine to open, where, and how: immutable, validated when built. Three equivalent ways to
 * make one, so the engine is chosen by configuration rather than code:
 *
 * <pre>{@code
 * StoreConfig.builder("hashlog").path(dir).durability(Durability.BUFFERED)
 *     .option("segment-size", "256MiB").build();
 * StoreConfig.parse("hashlog:/var/lib/app/data?durability=buffered&segment-size=256MiB");
 * StoreConfig.fromProperties(props); // kv4j.engine=hashlog, kv4j.path=..., kv4j.segment-size=...
 * }</pre>
 *
 * <p>Common settings and their defaults: {@code durability} ({@link Durability#SYNC}), {@code
 * create-if-missing} ({@code true}), {@code read-only} ({@code false}). Every other key is an
 * engine option; unknown keys are rejected with the list of valid ones, and bad values name the
 * key, the value and what is expected.
 *
 * <p>The engine is looked up among those {@link Stores} found, except in a config started with
 * {@link #builderFor(StoreProvider)} or {@link #parse(String, StoreProvider)}: that one is
 * validated against, and opened by, the provider it was given, registered or not (a tool's own
 * engines stay out of the registry every application sees). A config keeps its {@link #provider()}
 * through {@link #toBuilder()} and {@link #withPath(Path)}; it is not part of equality.
 */
public final class StoreConfig {
  /** The prefix of kv4j keys in a properties file. */
  public static final String PROPERTY_PREFIX = "kv4j.";

  private static final String ENGINE = "engine";
  private static final String PATH = "path";
  private static final String DURABILITY = "durability";
  private static final String CREATE = "create-if-missing";
  private static final String READ_ONLY = "read-only";
  private static final List<String> COMMON = List.of(DURABILITY, CREATE, READ_ONLY);

  private final String engine;
  private final Path path;
  private final Durability durability;
  private final boolean createIfMissing;
  private final boolean readOnly;
  private final Map<String, String> options;
  private final Map<String, Object> parsed;
  private final StoreProvider provider;

  private StoreConfig(Builder b, StoreProvider provider, Map<String, Object> parsed) {
    this.engine = b.engine;
    this.provider = provider;
    this.path = b.path;
    this.durability = b.durability;
    this.createIfMissing = b.createIfMissing;
    this.readOnly = b.readOnly;
    this.options = Collections.unmodifiableMap(new TreeMap<>(b.options));
    this.parsed = parsed;
  }

  /**
   * Starts a config for an engine id or alias.
   *
   * @param engine the engine id, such as {@code lmdb}
   * @return a builder
   */
  public static Builder builder(String engine) {
    return new Builder(engine, null);
  }

  /**
   * Starts a config for a given engine, registered with {@link Stores} or not: it is validated
   * against {@code provider}'s options, and {@link Stores#open(StoreConfig)} opens it with {@code
   * provider}.
   *
   * @param provider the engine; its id becomes the config's {@link #engine()}
   * @return a builder
   */
  public static Builder builderFor(StoreProvider provider) {
    Objects.requireNonNull(provider, "provider");
    return new Builder(provider.id(), provider);
  }

  /**
   * Parses a URI of the form {@code engine:path?key=value&key=value}. The path may be absolute or
   * relative and is percent-decoded; {@code memory:} needs no path.
   *
   * @param uri the URI
   * @return the validated config
   * @throws IllegalArgumentException if the URI is malformed or names an unknown engine or option
   */
  public static StoreConfig parse(String uri) {
    return fromUri(uri, null);
  }

  /**
   * Parses a URI as {@link #parse(String)} does, for a given engine, registered with {@link Stores}
   * or not (see {@link #builderFor(StoreProvider)}).
   *
   * @param uri the URI; its engine is {@code provider}'s id or one of its aliases
   * @param provider the engine
   * @return the validated config
   * @throws IllegalArgumentException if the URI is malformed, names another engine, or an option is
   *     unknown or invalid
   */
  public static StoreConfig parse(String uri, StoreProvider provider) {
    Objects.requireNonNull(provider, "provider");
    return fromUri(uri, provider);
  }

  /** Parses a URI for {@code provider}, or for the registry's engine when it is null. */
  private static StoreConfig fromUri(String uri, StoreProvider provider) {
    Objects.requireNonNull(uri, "uri");
    int colon = uri.indexOf(':');
    if (colon <= 0) {
      throw new IllegalArgumentException(
          "store URI '"
              + uri
              + "' has no engine: expected engine:path?key=value, e.g. hashlog:/data");
    }
    String engine = uri.substring(0, colon);
    Builder b = new Builder(engine, provider);
    if (provider != null
        && !provider.id().equals(b.engine)
        && !provider.aliases().contains(b.engine)) {
      throw new IllegalArgumentException(
          "store URI '" + uri + "' names engine '" + engine + "', not '" + provider.id() + "'");
    }
    String rest = uri.substring(colon + 1);
    int q = rest.indexOf('?');
    String pathPart = q < 0 ? rest : rest.substring(0, q);
    if (pathPart.startsWith("//")) {
      pathPart = pathPart.substring(2); // tolerate engine:///abs/path and engine://./rel
    }
    if (!pathPart.isEmpty()) {
      b.path(Path.of(decode(pathPart)));
    }
    if (q >= 0 && q + 1 < rest.length()) {
      for (String pair : rest.substring(q + 1).split("&")) {
        if (pair.isEmpty()) {
          continue;
        }
        int eq = pair.indexOf('=');
        if (eq <= 0) {
          throw new IllegalArgumentException(
              "store URI '" + uri + "' has a parameter without a value: '" + pair + "'");
        }
        b.set(decode(pair.substring(0, eq)), decode(pair.substring(eq + 1)));
      }
    }
    return b.build();
  }

  /**
   * Reads {@code kv4j.}-prefixed keys: {@code kv4j.engine} (required), {@code kv4j.path}, {@code
   * kv4j.durability}, {@code kv4j.create-if-missing}, {@code kv4j.read-only}, and {@code
   * kv4j.<engine option>}. Keys without the prefix are ignored, so kv4j settings can share a file
   * with others.
   *
   * @param properties the properties
   * @return the validated config
   * @throws IllegalArgumentException if {@code kv4j.engine} is missing or a key or value is invalid
   */
  public static StoreConfig fromProperties(Properties properties) {
    Objects.requireNonNull(properties, "properties");
    String engine = properties.getProperty(PROPERTY_PREFIX + ENGINE);
    if (engine == null) {
      throw new IllegalArgumentException(
          "properties have no '" + PROPERTY_PREFIX + ENGINE + "' key naming the engine");
    }
    Builder b = builder(engine.trim());
    for (String name : new TreeMap<>(toMap(properties)).keySet()) {
      if (!name.startsWith(PROPERTY_PREFIX) || name.equals(PROPERTY_PREFIX + ENGINE)) {
        continue;
      }
      String key = name.substring(PROPERTY_PREFIX.length());
      String value = properties.getProperty(name).trim();
      if (key.equals(PATH)) {
        b.path(Path.of(value));
      } else {
        b.set(key, value);
      }
    }
    return b.build();
  }

  /**
   * Reads a properties file, see {@link #fromProperties(Properties)}.
   *
   * @param file the file, UTF-8
   * @return the validated config
   * @throws StoreIOException if the file cannot be read
   */
  public static StoreConfig load(Path file) {
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      p.load(r);
    } catch (IOException e) {
      throw new StoreIOException("cannot read kv4j properties file " + file, e);
    }
    return fromProperties(p);
  }

  /**
   * The engine id or alias as given.
   *
   * @return the engine id
   */
  public String engine() {
    return engine;
  }

  /**
   * Where the data lives; null for engines that need no location.
   *
   * @return the path or null
   */
  public Path path() {
    return path;
  }

  /**
   * The durability of acknowledged writes. Default {@link Durability#SYNC}.
   *
   * @return the durability
   */
  public Durability durability() {
    return durability;
  }

  /**
   * Whether a missing location is created. Default true.
   *
   * @return true to create
   */
  public boolean createIfMissing() {
    return createIfMissing;
  }

  /**
   * Whether the store refuses writes. Default false.
   *
   * @return true for read-only
   */
  public boolean readOnly() {
    return readOnly;
  }

  /**
   * The engine options as given (validated), sorted by key.
   *
   * @return the options
   */
  public Map<String, String> options() {
    return options;
  }

  /**
   * The value of an engine option, parsed, or its default when not set.
   *
   * @param spec the option, as declared by the engine
   * @param <T> the option's type
   * @return the value
   */
  @SuppressWarnings("unchecked")
  public <T> T get(OptionSpec<T> spec) {
    Object v = parsed.get(spec.name());
    return v == null ? spec.defaultValue() : (T) v;
  }

  /**
   * The engine this config was validated against, and that {@link Stores#open(StoreConfig)} opens
   * it with: the one given to {@link #builderFor(StoreProvider)} or {@link #parse(String,
   * StoreProvider)}, else the one {@link Stores#provider(String)} found for {@link #engine()}.
   *
   * @return the provider
   */
  public StoreProvider provider() {
    return provider;
  }

  /**
   * A copy with a different path, for tools that open one configuration in several places.
   *
   * @param newPath the new path
   * @return the new config
   */
  public StoreConfig withPath(Path newPath) {
    return toBuilder().path(newPath).build();
  }

  /**
   * A builder holding this config's settings.
   *
   * @return a builder
   */
  public Builder toBuilder() {
    Builder b =
        new Builder(engine, provider)
            .durability(durability)
            .createIfMissing(createIfMissing)
            .readOnly(readOnly);
    if (path != null) {
      b.path(path);
    }
    options.forEach(b::option);
    return b;
  }

  /**
   * The config as a URI that {@link #parse(String)} turns back into an equal config.
   *
   * @return the URI
   */
  public String toUri() {
    return uri(false);
  }

  private String uri(boolean maskPasswords) {
    StringBuilder sb = new StringBuilder(engine).append(':');
    if (path != null) {
      sb.append(encodePath(path.toString()));
    }
    sb.append('?')
        .append(DURABILITY)
        .append('=')
        .append(durability.name().toLowerCase(Locale.ROOT));
    if (!createIfMissing) {
      sb.append('&').append(CREATE).append("=false");
    }
    if (readOnly) {
      sb.append('&').append(READ_ONLY).append("=true");
    }
    options.forEach(
        (k, v) -> {
          boolean masked = maskPasswords && isPassword(k) && !v.isEmpty();
          sb.append('&').append(encode(k)).append('=').append(masked ? "****" : encode(v));
        });
    return sb.toString();
  }

  private static boolean isPassword(String option) {
    return option.equals("password") || option.endsWith("-password");
  }

  /**
   * The config as {@code kv4j.}-prefixed properties that {@link #fromProperties(Properties)} turns
   * back into an equal config.
   *
   * @return the properties
   */
  public Properties toProperties() {
    Properties p = new Properties();
    p.setProperty(PROPERTY_PREFIX + ENGINE, engine);
    if (path != null) {
      p.setProperty(PROPERTY_PREFIX + PATH, path.toString());
    }
    p.setProperty(PROPERTY_PREFIX + DURABILITY, durability.name().toLowerCase(Locale.ROOT));
    p.setProperty(PROPERTY_PREFIX + CREATE, Boolean.toString(createIfMissing));
    p.setProperty(PROPERTY_PREFIX + READ_ONLY, Boolean.toString(readOnly));
    options.forEach((k, v) -> p.setProperty(PROPERTY_PREFIX + k, v));
    return p;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof StoreConfig c
        && engine.equals(c.engine)
        && Objects.equals(path, c.path)
        && durability == c.durability
        && createIfMissing == c.createIfMissing
        && readOnly == c.readOnly
        && options.equals(c.options);
  }

  @Override
  public int hashCode() {
    return Objects.hash(engine, path, durability, createIfMissing, readOnly, options);
  }

  /**
   * The config as {@link #toUri()} writes it, except that the value of every option named {@code
   * password} or ending in {@code -password} reads {@code ****}: configs end up in logs and
   * messages, their secrets must not. {@link #toUri()} keeps them, to round-trip.
   *
   * @return the URI with its passwords masked
   */
  @Override
  public String toString() {
    return uri(true);
  }

  private static Map<String, String> toMap(Properties p) {
    return p.stringPropertyNames().stream()
        .collect(Collectors.toMap(k -> k, p::getProperty, (a, b) -> a, TreeMap::new));
  }

  private static String decode(String s) {
    return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
  }

  private static String encodePath(String s) {
    return encode(s).replace("%2F", "/").replace("%3A", ":").replace("%5C", "\\");
  }

  /**
   * Collects settings; {@link #build()} validates them against the engine's declared options. Not
   * thread-safe.
   */
  public static final class Builder {
    private final String engine;
    private final StoreProvider given; // null: the registry's engine of that id
    private Path path;
    private Durability durability = Durability.SYNC;
    private boolean createIfMissing = true;
    private boolean readOnly;
    private final Map<String, String> options = new TreeMap<>();

    private Builder(String engine, StoreProvider given) {
      Objects.requireNonNull(engine, "engine");
      if (engine.isBlank()) {
        throw new IllegalArgumentException("engine id is blank");
      }
      this.engine = engine.trim().toLowerCase(Locale.ROOT);
      this.given = given;
    }

    /**
     * Sets where the data lives: a directory the engine owns.
     *
     * @param path the directory
     * @return this builder
     */
    public Builder path(Path path) {
      this.path = Objects.requireNonNull(path, "path");
      return this;
    }

    /**
     * Sets the durability of acknowledged writes. Default {@link Durability#SYNC}.
     *
     * @param durability the durability
     * @return this builder
     */
    public Builder durability(Durability durability) {
      this.durability = Objects.requireNonNull(durability, "durability");
      return this;
    }

    /**
     * Sets whether a missing location is created. Default true.
     *
     * @param create true to create
     * @return this builder
     */
    public Builder createIfMissing(boolean create) {
      this.createIfMissing = create;
      return this;
    }

    /**
     * Sets whether the store refuses writes. Default false.
     *
     * @param readOnly true for read-only
     * @return this builder
     */
    public Builder readOnly(boolean readOnly) {
      this.readOnly = readOnly;
      return this;
    }

    /**
     * Sets an engine option by name; validated in {@link #build()}.
     *
     * @param key the option name
     * @param value the value as text
     * @return this builder
     */
    public Builder option(String key, String value) {
      Objects.requireNonNull(key, "option key");
      Objects.requireNonNull(value, "option '" + key + "' value");
      options.put(key, value);
      return this;
    }

    /**
     * Sets an engine option from its spec.
     *
     * @param spec the option
     * @param value the value
     * @param <T> the option's type
     * @return this builder
     */
    public <T> Builder option(OptionSpec<T> spec, T value) {
      return option(spec.name(), String.valueOf(value));
    }

    /** Routes a text key to a common setting or to the engine options. */
    Builder set(String key, String value) {
      switch (key) {
        case DURABILITY -> {
          try {
            durability(Durability.valueOf(value.trim().toUpperCase(Locale.ROOT)));
          } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                "'"
                    + DURABILITY
                    + "' has invalid value '"
                    + value
                    + "': expected sync or buffered");
          }
        }
        case CREATE -> createIfMissing(parseBoolean(CREATE, value));
        case READ_ONLY -> readOnly(parseBoolean(READ_ONLY, value));
        default -> option(key, value);
      }
      return this;
    }

    private static boolean parseBoolean(String key, String value) {
      String v = value.trim().toLowerCase(Locale.ROOT);
      if (!v.equals("true") && !v.equals("false")) {
        throw new IllegalArgumentException(
            "'" + key + "' has invalid value '" + value + "': expected true or false");
      }
      return Boolean.parseBoolean(v);
    }

    /**
     * Validates and builds.
     *
     * @return the config
     * @throws IllegalArgumentException if the engine is unknown, an option key is not one of the
     *     engine's (the message lists the valid ones), a value is invalid, or a persistent engine
     *     has no path
     */
    public StoreConfig build() {
      StoreProvider provider = given != null ? given : Stores.provider(engine);
      Map<String, OptionSpec<?>> specs = new TreeMap<>();
      for (OptionSpec<?> s : provider.options()) {
        specs.put(s.name(), s);
      }
      Map<String, Object> parsed = new TreeMap<>();
      for (Map.Entry<String, String> e : options.entrySet()) {
        OptionSpec<?> spec = specs.get(e.getKey());
        if (spec == null) {
          throw new IllegalArgumentException(
              "unknown option '"
                  + e.getKey()
                  + "' for engine '"
                  + provider.id()
                  + "'; valid options: "
                  + validKeys(specs));
        }
        parsed.put(e.getKey(), spec.parse(e.getValue()));
      }
      if (path == null && provider.features().contains(Feature.PERSISTENT)) {
        throw new IllegalArgumentException(
            "engine '" + provider.id() + "' stores data on disk and needs a path");
      }
      return new StoreConfig(this, provider, Collections.unmodifiableMap(parsed));
    }

    private static String validKeys(Map<String, OptionSpec<?>> specs) {
      StringBuilder sb = new StringBuilder(String.join(", ", COMMON));
      for (String k : specs.keySet()) {
        sb.append(", ").append(k);
      }
      return sb.toString();
    }
  }
}
