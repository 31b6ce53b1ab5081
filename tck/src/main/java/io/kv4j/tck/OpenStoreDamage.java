package io.kv4j.tck;

import static org.assertj.core.api.Assertions.fail;

import io.kv4j.Cursor;
import io.kv4j.Entry;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreCorruptedException;
import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/**
 * A bit flipped in a file of a store that stays open, and the check that {@code verify()} or a full
 * scan reports it (rules 12.7 and 17.14).
 *
 * <p>The store's own background work (compaction) may delete the chosen file at any moment: before
 * the flip (the largest file is chosen again), or after it and before anything reported it (the
 * damage is gone with the file, so nothing is left to report: the flip is done again), also a
 * moment after the check (the store had retired it, its records copied elsewhere, and deletes it
 * from a background thread). Only a damaged file that is still there a few seconds after neither
 * check reported it, and that a second check does not report either, fails the rule.
 */
final class OpenStoreDamage {
  /** How often a flip whose file vanished is done again before the rule gives up. */
  private static final int ATTEMPTS = 10;

  /** How long a damaged file nothing reported may take to be deleted by the store. */
  private static final Duration RETIRE_WAIT = Duration.ofSeconds(5);

  private final RuleGroup group;
  private final String id;
  private final Path location;

  /**
   * @param through how the checked handle is named in messages: empty for the store itself, or e.g.
   *     {@code " through the keyspace handle"}
   */
  private final String through;

  private final String whose;

  OpenStoreDamage(RuleGroup group, String id, Path location, String through, String whose) {
    this.group = group;
    this.id = id;
    this.location = location;
    this.through = through;
    this.whose = whose;
  }

  /** One flip: the file (relative to the location), its size, the offset and the old byte. */
  private record Flip(String file, long size, long at, int old) {}

  /**
   * Flips bit 4 of the byte in the middle of the written part of the largest data file, then checks
   * that {@code store} reports it; returns what was flipped and how it was reported.
   *
   * @param how what was written into the file, for messages (e.g. ", written through the keyspace
   *     handle"); may be empty
   */
  String flipAndCheck(Store store, long seed, String how) throws IOException {
    for (int attempt = 1; ; attempt++) {
      Flip flip = flipMiddleOfLargest();
      String what =
          String.format(
              "%s (the largest data file, %d bytes%s) with bit 4 of the byte at offset %d flipped"
                  + " (0x%02x -> 0x%02x) while the store was open",
              flip.file, flip.size, how, flip.at, flip.old, flip.old ^ 0x10);
      System.out.println("[" + id + "] " + what);
      String verdict = reported(store, seed, what);
      if (verdict != null) {
        return verdict;
      }
      if (stillThere(location.resolve(flip.file))) {
        // Not deleted after a few seconds: a part of the store, or kept for a reader. Once more,
        // in case the check met the file while the store was retiring it.
        verdict = reported(store, seed, what);
        if (verdict != null) {
          return verdict;
        }
      }
      if (Files.exists(location.resolve(flip.file)) || attempt == ATTEMPTS) {
        fail(
            RuleGroup.rule(
                id,
                what
                    + ": verify()"
                    + through
                    + (store.info().has(Feature.ORDERED_SCAN) ? " and a full scan" + through : "")
                    + " passed on a store whose "
                    + whose
                    + " was damaged: verify() must check the files as they are on disk, not a copy"
                    + " or cache of them, and report the damage with StoreCorruptedException"
                    + (attempt > 1
                        ? " (the " + (attempt - 1) + " flips before were deleted by the store)"
                        : "")));
      }
      System.out.println(
          "[" + id + "] " + flip.file + " was deleted by the store before the check: flip again");
    }
  }

  /**
   * Whether {@code file} still exists after {@link #RETIRE_WAIT}: an engine may have retired it
   * (its records copied elsewhere, so its damage is no longer the store's) and delete it a moment
   * later, from a background thread.
   */
  private static boolean stillThere(Path file) {
    long deadline = System.nanoTime() + RETIRE_WAIT.toNanos();
    while (Files.exists(file)) {
      if (System.nanoTime() - deadline >= 0) {
        return true;
      }
      LockSupport.parkNanos(20_000_000L);
    }
    return false;
  }

  private Flip flipMiddleOfLargest() throws IOException {
    for (int attempt = 1; ; attempt++) {
      Map<String, Long> files = group.dataFileSizes(location);
      files.remove(StoreDirectory.IDENTITY_FILE);
      String pick = null;
      for (Map.Entry<String, Long> f : files.entrySet()) {
        if (pick == null || f.getValue() > files.get(pick)) {
          pick = f.getKey();
        }
      }
      if (pick == null || files.get(pick) == 0) {
        fail(
            RuleGroup.rule(
                id, "the open store's directory " + location + " holds no data file: " + files));
      }
      Path file = location.resolve(pick);
      try (FileChannel ch =
          FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
        long size = ch.size();
        long at = (Damage.lastNonZeroByte(file, size) + 1) / 2;
        ByteBuffer one = ByteBuffer.allocate(1);
        ch.read(one, at);
        int old = one.get(0) & 0xff;
        ch.write(ByteBuffer.wrap(new byte[] {(byte) (old ^ 0x10)}), at);
        ch.force(false);
        return new Flip(pick, size, at, old);
      } catch (NoSuchFileException gone) {
        // Deleted by the store's background work since the listing: choose again.
        if (attempt == ATTEMPTS) {
          throw gone;
        }
      }
    }
  }

  /**
   * {@code verify()}, then (with {@code ORDERED_SCAN}) a full scan against the data set: returns
   * how the damage was reported, or null if neither reported it. Fails if either throws anything
   * but {@code StoreCorruptedException}, or the scan returns a wrong value.
   */
  private String reported(Store s, long seed, String what) {
    try {
      s.verify();
    } catch (StoreCorruptedException e) {
      return "verify()" + through + " reported it: " + e.getMessage();
    } catch (RuntimeException e) {
      fail(
          RuleGroup.rule(
              id,
              what
                  + ": verify()"
                  + through
                  + " threw "
                  + e
                  + " (damage must be reported as StoreCorruptedException)"));
    }
    if (!s.info().has(Feature.ORDERED_SCAN)) {
      return null;
    }
    DamageWorker.DataSet data = DamageWorker.DataSet.of(seed);
    String scanned = what + ": verify()" + through + " passed, and a full scan" + through;
    try (Cursor c = s.scan(KeyRange.all())) {
      while (c.hasNext()) {
        Entry e = c.next();
        byte[] want = data.live.get(e.key());
        if (want == null || !Arrays.equals(want, e.value())) {
          fail(
              RuleGroup.rule(
                  id,
                  scanned
                      + " returned key "
                      + DamageWorker.name(e.key())
                      + (want == null
                          ? ", which is not live"
                          : " with a wrong value: " + data.difference(e.key(), e.value(), want))
                      + "; the damage must be reported as StoreCorruptedException"));
        }
      }
    } catch (StoreCorruptedException e) {
      return "verify()"
          + through
          + " passed; the full scan"
          + through
          + " reported it: "
          + e.getMessage();
    } catch (RuntimeException e) {
      fail(
          RuleGroup.rule(
              id,
              scanned + " threw " + e + " (damage must be reported as StoreCorruptedException)"));
    }
    return null;
  }
}
