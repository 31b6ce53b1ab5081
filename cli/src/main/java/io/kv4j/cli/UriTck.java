package io.kv4j.cli;

import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import io.kv4j.tck.StoreTck;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The TCK against the engine named by the system property {@value #PROPERTY}: a URI whose path is
 * ignored (each rule gets a fresh directory) and whose query holds engine options, such as {@code
 * hashlog:?segment-size=1MiB}. Run by {@code kv4j tck}.
 */
public final class UriTck extends StoreTck {
  /** The system property holding the engine URI. */
  public static final String PROPERTY = "kv4j.cli.tck.uri";

  /** Created by JUnit. */
  public UriTck() {}

  @Override
  protected StoreConfig config(Path directory, Durability durability) {
    return config(System.getProperty(PROPERTY), directory, durability);
  }

  static StoreConfig config(String uri, Path directory, Durability durability) {
    if (uri == null || uri.isBlank()) {
      throw new IllegalStateException("system property " + PROPERTY + " names no engine URI");
    }
    int colon = uri.indexOf(':');
    String engine = colon < 0 ? uri : uri.substring(0, colon);
    int q = uri.indexOf('?');
    String query = q < 0 ? "" : uri.substring(q);
    // Parse with a placeholder path (persistent engines need one), then use the rule's directory.
    return StoreConfig.parse(engine + ":/kv4j-tck-placeholder" + query).toBuilder()
        .path(directory)
        .durability(durability)
        .build();
  }

  /** Adds the flags the engines need to the child JVMs of the crash rules. */
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
    return opts;
  }
}
