package io.kv4j.tck;

import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import io.kv4j.spi.StoreProvider;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The TCK against the engine named by the system property {@value #PROPERTY}, for tools that run
 * the kit programmatically (with the JUnit Platform Launcher) against an engine chosen at run time:
 * {@code kv4j tck} and the bench's conformance matrix. The property holds a URI whose path is
 * ignored (each rule gets a fresh directory) and whose query holds engine options, such as {@code
 * hashlog:?segment-size=1MiB}.
 *
 * <p>The crash rules start child JVMs with this JVM's command-line flags. Run from a jar whose
 * manifest carries the flags ({@code Add-Opens}, {@code Enable-Native-Access}), those flags are not
 * on the command line, so this class adds the ones the bundled engines need, plus any listed (space
 * separated) in the system property {@value #CHILD_JVM_OPTIONS}.
 *
 * <p>An engine the registry of {@link io.kv4j.Stores} does not hold is named by its provider class
 * in {@value #PROVIDER} (what {@link TckRunner#forProvider} sets): the rules make the provider with
 * its public no-argument constructor and open the URI's engine with it, and so do the child JVMs,
 * which get the class name as that system property.
 */
public final class UriTck extends StoreTck {
  /** The system property holding the engine URI. */
  public static final String PROPERTY = "kv4j.tck.uri";

  /** The system property holding extra JVM options (space separated) for the crash rules. */
  public static final String CHILD_JVM_OPTIONS = "kv4j.tck.childJvmOptions";

  /**
   * The system property holding the class of the engine's provider, for an engine the registry does
   * not hold; blank or absent: the URI's engine is looked up in the registry.
   */
  public static final String PROVIDER = "kv4j.tck.provider";

  /** Created by JUnit. */
  public UriTck() {}

  @Override
  protected StoreConfig config(Path directory, Durability durability) {
    String className = parameter(PROVIDER);
    StoreProvider given =
        className == null || className.isBlank() ? null : GivenEngine.load(className.trim());
    return config(parameter(PROPERTY), given, directory, durability);
  }

  /**
   * The config a rule gets for an engine URI.
   *
   * @param uri the engine and its options, such as {@code hashlog:?segment-size=1MiB}; its path is
   *     ignored
   * @param directory the rule's directory
   * @param durability the rule's durability
   * @return the config
   * @throws IllegalStateException if {@code uri} is null or blank
   * @throws IllegalArgumentException if the engine is unknown or an option is invalid
   */
  public static StoreConfig config(String uri, Path directory, Durability durability) {
    return config(uri, null, directory, durability);
  }

  /** As {@link #config(String, Path, Durability)}, for {@code given} when not null. */
  static StoreConfig config(
      String uri, StoreProvider given, Path directory, Durability durability) {
    if (uri == null || uri.isBlank()) {
      throw new IllegalStateException("system property " + PROPERTY + " names no engine URI");
    }
    int colon = uri.indexOf(':');
    String engine = colon < 0 ? uri : uri.substring(0, colon);
    int q = uri.indexOf('?');
    String query = q < 0 ? "" : uri.substring(q);
    // Parse with a placeholder path (persistent engines need one), then use the rule's directory.
    String placeholder = engine + ":/kv4j-tck-placeholder" + query;
    return (given == null ? StoreConfig.parse(placeholder) : StoreConfig.parse(placeholder, given))
        .toBuilder().path(directory).durability(durability).build();
  }

  /**
   * Adds the flags the engines need to the child JVMs of the crash rules, and those in {@value
   * #CHILD_JVM_OPTIONS}.
   */
  @Override
  protected List<String> childJvmOptions() {
    List<String> opts = new ArrayList<>(super.childJvmOptions());
    String joined = String.join(" ", opts);
    if (!joined.contains("java.base/java.nio=")) {
      opts.add("--add-opens=java.base/java.nio=ALL-UNNAMED");
    }
    if (!joined.contains("java.base/sun.nio.ch=")) {
      opts.add("--add-opens=java.base/sun.nio.ch=ALL-UNNAMED");
    }
    if (!joined.contains("--enable-native-access")) {
      opts.add("--enable-native-access=ALL-UNNAMED");
    }
    String extra = java.util.Objects.requireNonNullElse(parameter(CHILD_JVM_OPTIONS), "").trim();
    if (!extra.isEmpty()) {
      for (String o : extra.split("\\s+")) {
        if (!opts.contains(o)) {
          opts.add(o);
        }
      }
    }
    return opts;
  }
}
