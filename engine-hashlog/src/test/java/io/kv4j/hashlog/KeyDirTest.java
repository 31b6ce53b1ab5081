package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class KeyDirTest {
  /** Keys are 8-byte numbers; a key's "record location" is the number + 1, so no segment needed. */
  private static final KeyDir.KeySource SOURCE =
      (loc, key, span) -> ByteBuffer.wrap(key).getLong() == loc - 1;

  /** Record size handed to {@link KeyDir#put} where the test does not look at spans. */
  private static final long SIZE = 100;

  private static byte[] key(long i) {
    return ByteBuffer.allocate(8).putLong(i).array();
  }

  private static long hash(byte[] k) {
    return KeyDir.fix(KeyHash.hash(k, 99));
  }

  @Test
  void touchHomes_loadsEachKeysHomeSlot() {
    KeyDir d = new KeyDir(16); // 32 slots: 3 keys land in distinct homes or probe past them
    long[] hashes = new long[3];
    for (int i = 0; i < hashes.length; i++) {
      byte[] k = key(i);
      hashes[i] = hash(k);
      d.put(hashes[i], k, i + 1, SIZE, SOURCE);
    }
    // A key stored in its home slot contributes its hash word (span bits included) to the sum;
    // one pushed on by a collision contributes the word of whatever key holds its home.
    long expected = 0;
    for (long h : hashes) {
      expected += d.homeWord(h);
    }
    assertThat(d.touchHomes(hashes, 0, 3)).isEqualTo(expected).isNotZero();
    assertThat(d.touchHomes(hashes, 1, 1)).isZero();
    KeyDir empty = new KeyDir(16);
    assertThat(empty.touchHomes(hashes, 0, 3)).isZero();
  }

  @Test
  void growsToTenMillionKeys_andShrinksAfterDeletes() {
    KeyDir d = new KeyDir(16);
    int n = 10_000_000;
    byte[] k = new byte[8];
    ByteBuffer kb = ByteBuffer.wrap(k);
    long wrong = 0;
    for (long i = 0; i < n; i++) {
      kb.putLong(0, i);
      wrong += d.put(hash(k), k, i + 1, SIZE, SOURCE) != 0 ? 1 : 0;
    }
    assertThat(wrong).isZero();
    assertThat(d.size()).isEqualTo(n);
    assertThat(d.capacity()).isGreaterThanOrEqualTo(n * 4 / 3);
    long bytesPerKey = d.memoryBytes() / n;
    assertThat(bytesPerKey).isLessThanOrEqualTo(48);
    for (long i = 0; i < n; i += 9973) {
      kb.putLong(0, i);
      assertThat(d.find(hash(k), k, SOURCE, true)).as("key %d", i).isEqualTo(i + 1);
    }
    int bigCapacity = d.capacity();
    for (long i = 0; i < n; i++) {
      if (i % 1000 != 0) {
        kb.putLong(0, i);
        wrong += d.remove(hash(k), k, SOURCE) != i + 1 ? 1 : 0;
      }
    }
    assertThat(wrong).isZero();
    assertThat(d.size()).isEqualTo(n / 1000);
    assertThat(d.capacity()).isLessThanOrEqualTo(bigCapacity / 64);
    for (long i = 0; i < n; i += 997) {
      kb.putLong(0, i);
      assertThat(d.find(hash(k), k, SOURCE, true))
          .as("key %d", i)
          .isEqualTo(i % 1000 == 0 ? i + 1 : 0);
    }
  }

  @Test
  void identicalHashes_neverLoseAKey() {
    KeyDir d = new KeyDir(16);
    int n = 2000;
    for (long i = 0; i < n; i++) {
      assertThat(d.put(7, key(i), i + 1, SIZE, SOURCE)).isZero();
    }
    for (long i = 0; i < n; i += 2) {
      assertThat(d.remove(7, key(i), SOURCE)).isEqualTo(i + 1);
    }
    for (long i = 0; i < n; i++) {
      // An absent key whose hash other keys share is reported as a suspect (negative), not found.
      assertThat(Math.max(0, d.find(7, key(i), SOURCE, true)))
          .as("key %d", i)
          .isEqualTo(i % 2 == 0 ? 0 : i + 1);
      if (i % 2 == 0) {
        assertThat(d.find(7, key(i), SOURCE, true)).as("key %d suspect", i).isNegative();
      }
    }
    assertThat(d.size()).isEqualTo(n / 2);
    assertThat(d.locations()).hasSize(n / 2);
  }

  @Test
  void backwardShiftDeletion_keepsWrappedProbeRunsReachable() {
    KeyDir d = new KeyDir(16); // 32 slots: hashes are chosen to collide at the table's end
    int cap = d.capacity();
    long[] hashes = new long[12];
    for (int i = 0; i < hashes.length; i++) {
      hashes[i] = (cap - 3 + (i % 4)) & (cap - 1); // homes at the last slots and slot 0
      if (hashes[i] == 0) {
        hashes[i] = (long) cap << 32; // home 0 after folding, non-zero hash
      }
    }
    for (int i = 0; i < hashes.length; i++) {
      d.put(hashes[i], key(i), i + 1, SIZE, SOURCE);
    }
    for (int i = 0; i < hashes.length; i += 3) {
      assertThat(d.remove(hashes[i], key(i), SOURCE)).isEqualTo(i + 1);
    }
    for (int i = 0; i < hashes.length; i++) {
      assertThat(Math.max(0, d.find(hashes[i], key(i), SOURCE, true)))
          .as("key %d", i)
          .isEqualTo(i % 3 == 0 ? 0 : i + 1);
    }
  }

  @Test
  void span_countsThe128ByteStepsPastTheFirstLine() {
    assertThat(KeyDir.span(12)).isZero();
    assertThat(KeyDir.span(64)).isZero();
    assertThat(KeyDir.span(65)).isEqualTo(1);
    assertThat(KeyDir.span(192)).isEqualTo(1);
    assertThat(KeyDir.span(193)).isEqualTo(2);
    assertThat(KeyDir.span(12 + 16 + 1024)).isEqualTo(8); // covers the 1,052 bytes
    assertThat(64 + 128 * KeyDir.span(12 + 16 + 1024)).isGreaterThanOrEqualTo(12 + 16 + 1024);
    assertThat(KeyDir.span(64 + 15 * 128)).isEqualTo(KeyDir.MAX_SPAN);
    assertThat(KeyDir.span(256L << 20)).isEqualTo(KeyDir.MAX_SPAN);
  }

  @Test
  void find_handsTheStoredSpanToTheKeySource_andAnOverwriteUpdatesIt() {
    int[] seen = new int[1];
    KeyDir.KeySource recording =
        (loc, key, span) -> {
          seen[0] = span;
          return ByteBuffer.wrap(key).getLong() == (loc & 0xFFFF) - 1;
        };
    KeyDir d = new KeyDir(16);
    byte[] k = key(5);
    long h = hash(k);
    d.put(h, k, 6, 1052, recording);
    assertThat(d.find(h, k, recording, true)).isEqualTo(6);
    assertThat(seen[0]).isEqualTo(KeyDir.span(1052));
    assertThat(d.find(h, k, recording, false)).as("a lookup without read-ahead").isEqualTo(6);
    assertThat(seen[0]).isZero();
    // Overwrite with a small record: the span follows the new record.
    assertThat(d.put(h, k, (1L << 32) | 6, 40, recording)).isEqualTo(6);
    assertThat(d.find(h, k, recording, true)).isEqualTo((1L << 32) | 6);
    assertThat(seen[0]).isZero();
    // Compaction's move keeps the span (same record, same length) and the hash still matches.
    d.put(h, k, (2L << 32) | 6, 700, recording);
    assertThat(d.replace(h, (2L << 32) | 6, (3L << 32) | 6)).isTrue();
    assertThat(d.holds(h, (3L << 32) | 6)).isTrue();
    assertThat(d.find(h, k, recording, true)).isEqualTo((3L << 32) | 6);
    assertThat(seen[0]).isEqualTo(KeyDir.span(700));
    assertThat(d.remove(h, k, recording)).isEqualTo((3L << 32) | 6);
    assertThat(d.find(h, k, recording, true)).isZero();
  }

  @Test
  void fix_keepsSixtyBits_soSpansNeverChangeWhichKeyASlotMatches() {
    // Hashes that differ only in the top 4 bits are one hash to the table.
    long low = 0x0123_4567_89AB_CDEFL;
    assertThat(KeyDir.fix(low | 0xF000_0000_0000_0000L)).isEqualTo(KeyDir.fix(low)).isEqualTo(low);
    assertThat(KeyDir.fix(0xF000_0000_0000_0000L)).isEqualTo(1);
    KeyDir d = new KeyDir(16);
    for (long i = 0; i < 3000; i++) {
      // Every span from 0 to 15 in turn, and top-bit-heavy hashes.
      long size = 64 + 128 * (i % 16);
      d.put(KeyDir.fix(hash(key(i)) | 0xF000_0000_0000_0000L), key(i), i + 1, size, SOURCE);
    }
    for (long i = 0; i < 3000; i++) {
      assertThat(d.find(KeyDir.fix(hash(key(i))), key(i), SOURCE, true))
          .as("key %d", i)
          .isEqualTo(i + 1);
    }
    for (long i = 0; i < 3000; i += 2) {
      assertThat(d.remove(hash(key(i)), key(i), SOURCE)).isEqualTo(i + 1);
    }
    for (long i = 0; i < 3000; i++) {
      assertThat(d.find(hash(key(i)), key(i), SOURCE, true))
          .as("key %d", i)
          .isEqualTo(i % 2 == 0 ? 0 : i + 1);
    }
  }
}
