package io.kv4j.cli;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreIOException;
import io.kv4j.Stores;
import io.kv4j.spi.DirectoryLock;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.stream.Stream;

/** Opens stores given as URIs, with defaults that suit each command. */
final class Uris {
  /** What a command does with a store. */
  enum Mode {
    /** Reads only: opened read-only, never created. */
    READ,
    /** Writes to an existing store. */
    WRITE,
    /** Writes, creating the store if missing. */
    CREATE,
    /** The target of a copy: created if missing, buffered writes synced at the end. */
    COPY_TARGET
  }

  private Uris() {}

  /** Parses a URI, turning a bad URI into a usage error. */
  static StoreConfig parse(String uri) {
    try {
      return StoreConfig.parse(uri);
    } catch (IllegalArgumentException e) {
      throw new CliException(ExitCode.USAGE, e.getMessage());
    }
  }

  /**
   * Opens a store. Settings given in the URI win; otherwise READ opens read-only without creating,
   * WRITE does not create, and COPY_TARGET writes with buffered durability (the copy syncs at the
   * end).
   */
  static Store open(String uri, Mode mode) {
    StoreConfig config = parse(uri);
    Set<String> given = queryKeys(uri);
    StoreConfig.Builder b = config.toBuilder();
    if (mode == Mode.READ && !given.contains("read-only")) {
      b.readOnly(true);
    }
    if ((mode == Mode.READ || mode == Mode.WRITE) && !given.contains("create-if-missing")) {
      b.createIfMissing(false);
    }
    if (mode == Mode.COPY_TARGET && !given.contains("durability")) {
      b.durability(Durability.BUFFERED);
    }
    try {
      config = b.build();
    } catch (IllegalArgumentException e) {
      throw new CliException(ExitCode.USAGE, e.getMessage());
    }
    boolean persistent = Stores.provider(config.engine()).features().contains(Feature.PERSISTENT);
    try {
      return Stores.open(config);
    } catch (StoreIOException e) {
      // Asked only after the engine refused: for a server engine the path names a table or key
      // prefix, not a local directory, so it must not be looked up on this file system first.
      if (persistent
          && !config.createIfMissing()
          && config.path() != null
          && isEmptyOrMissing(config.path())) {
        throw new CliException(
            ExitCode.NOT_FOUND,
            "no store at "
                + config.path().toAbsolutePath().normalize()
                + " (engine '"
                + config.engine()
                + "'); 'kv4j put' creates one");
      }
      throw e;
    }
  }

  /**
   * Whether a path holds no store at all: missing, or a directory with nothing but kv4j's lock
   * file. Anything else is left to the engine, which tells a store from damage or foreign files.
   */
  private static boolean isEmptyOrMissing(Path path) {
    if (!Files.exists(path)) {
      return true;
    }
    if (!Files.isDirectory(path)) {
      return false;
    }
    try (Stream<Path> s = Files.list(path)) {
      return s.allMatch(p -> p.getFileName().toString().equals(DirectoryLock.FILE_NAME));
    } catch (IOException e) {
      return false; // unreadable: let the engine's open report it
    }
  }

  /** The parameter names given in a URI's query. */
  static Set<String> queryKeys(String uri) {
    Set<String> keys = new HashSet<>();
    int q = uri.indexOf('?');
    if (q < 0) {
      return keys;
    }
    for (String pair : uri.substring(q + 1).split("&")) {
      int eq = pair.indexOf('=');
      String k = eq < 0 ? pair : pair.substring(0, eq);
      if (!k.isEmpty()) {
        keys.add(URLDecoder.decode(k, StandardCharsets.UTF_8));
      }
    }
    return keys;
  }
}
