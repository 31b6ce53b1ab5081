package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import io.kv4j.Feature;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreException;
import io.kv4j.spi.DirectoryLock;
import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;

/**
 * Rule 10.7: a location overwritten with garbage is refused, never opened as an empty store. Two
 * cases: every file overwritten (the identity file {@value StoreDirectory#IDENTITY_FILE} too, which
 * its own checksum refuses), and the identity file intact with every other file overwritten, so the
 * engine's own reading of its data files must notice.
 */
final class CorruptLocation extends RuleGroup {
  private static final int KEYS = 100;

  CorruptLocation(TckBase kit) {
    super(kit);
  }

  void required_r10_7_corruptLocationIsReported() throws IOException {
    require("10.7", Feature.PERSISTENT);
    requireDataInLocationFiles("10.7");
    Path everything = tempDir.resolve("garbage-everywhere");
    fill(everything);
    List<Path> all = overwrite(everything, 107, name -> true);
    assertRefused(everything, "every file (" + names(all) + ") overwritten with garbage");

    Path data = tempDir.resolve("garbage-data");
    fill(data);
    List<Path> dataFiles =
        overwrite(
            data,
            1071,
            name ->
                !name.equals(StoreDirectory.IDENTITY_FILE)
                    && !isLockFile(name)
                    && !isDiagnosticFile(name));
    assertThat(dataFiles)
        .as(
            rule(
                "10.7",
                "the store keeps its data in files besides its identity file "
                    + StoreDirectory.IDENTITY_FILE))
        .isNotEmpty();
    assertRefused(
        data,
        "the identity file "
            + StoreDirectory.IDENTITY_FILE
            + " intact and every data file ("
            + names(dataFiles)
            + ") overwritten with garbage");
  }

  private void fill(Path location) {
    Store s = open(config(location, Durability.SYNC));
    for (int i = 0; i < KEYS; i++) {
      s.put(key(i), b("value " + i));
    }
    close(s);
  }

  /** Overwrites each file that {@code chosen} names with seeded garbage at least 4 KiB long. */
  private static List<Path> overwrite(
      Path location, long seed, java.util.function.Predicate<String> chosen) throws IOException {
    SplittableRandom rnd = new SplittableRandom(seed);
    List<Path> done = new ArrayList<>();
    try (Stream<Path> files = Files.walk(location)) {
      for (Path f : files.filter(Files::isRegularFile).sorted().toList()) {
        String name = f.getFileName().toString();
        if (name.equals(DirectoryLock.FILE_NAME) || !chosen.test(name)) {
          continue;
        }
        Files.write(f, value(rnd, (int) Math.max(4096, Files.size(f))));
        done.add(f);
      }
    }
    return done;
  }

  private static String names(List<Path> files) {
    return String.join(", ", files.stream().map(f -> f.getFileName().toString()).toList());
  }

  /**
   * The open throws a {@link StoreException}, or the opened store never answers a value other than
   * the one written (or none) and reports the damage: on a read of one of the keys, or from {@code
   * verify()}.
   */
  private void assertRefused(Path location, String what) {
    StoreConfig cfg = config(location, Durability.SYNC);
    Store damaged;
    try {
      damaged = open(cfg);
    } catch (StoreException e) {
      return; // reported at open: good
    }
    int reported = 0;
    try {
      for (int i = 0; i < KEYS; i++) {
        try {
          byte[] v = damaged.get(key(i));
          assertThat(v == null || Arrays.equals(v, b("value " + i)))
              .as(rule("10.7", what + ": a damaged store never returns garbage as a value"))
              .isTrue();
        } catch (StoreException e) {
          reported++;
        }
      }
      if (reported == 0) {
        try {
          damaged.verify();
        } catch (StoreException e) {
          reported++;
        }
      }
    } finally {
      try {
        close(damaged);
      } catch (StoreException e) {
        reported++; // damage reported at close is reported all the same
      }
    }
    assertThat(reported)
        .as(
            rule(
                "10.7",
                what
                    + ": opening, reading or verify() must report StoreException (corrupt), not"
                    + " act as an empty store"))
        .isPositive();
  }
}
