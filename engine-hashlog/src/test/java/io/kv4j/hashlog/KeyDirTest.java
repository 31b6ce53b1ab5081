package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class KeyDirTest {
  /** Keys are 8-byte numbers; a key's "record location" is the number + 1, so no segment needed. */
  private static final KeyDir.KeySource SOURCE =
      (loc, key) -> ByteBuffer.wrap(key).getLong() == loc - 1;

  private static byte[] key(long i) {
    return ByteBuffer.allocate(8).putLong(i).array();
  }

  private static long hash(byte[] k) {
    return KeyDir.fix(KeyHash.hash(k, 99));
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
      wrong += d.put(hash(k), k, i + 1, SOURCE) != 0 ? 1 : 0;
    }
    assertThat(wrong).isZero();
    assertThat(d.size()).isEqualTo(n);
    assertThat(d.capacity()).isGreaterThanOrEqualTo(n * 4 / 3);
    long bytesPerKey = d.memoryBytes() / n;
    assertThat(bytesPerKey).isLessThanOrEqualTo(48);
    for (long i = 0; i < n; i += 9973) {
      kb.putLong(0, i);
      assertThat(d.find(hash(k), k, SOURCE)).as("key %d", i).isEqualTo(i + 1);
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
      assertThat(d.find(hash(k), k, SOURCE)).as("key %d", i).isEqualTo(i % 1000 == 0 ? i + 1 : 0);
    }
  }

  @Test
  void identicalHashes_neverLoseAKey() {
    KeyDir d = new KeyDir(16);
    int n = 2000;
    for (long i = 0; i < n; i++) {
      assertThat(d.put(7, key(i), i + 1, SOURCE)).isZero();
    }
    for (long i = 0; i < n; i += 2) {
      assertThat(d.remove(7, key(i), SOURCE)).isEqualTo(i + 1);
    }
    for (long i = 0; i < n; i++) {
      assertThat(d.find(7, key(i), SOURCE)).as("key %d", i).isEqualTo(i % 2 == 0 ? 0 : i + 1);
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
      d.put(hashes[i], key(i), i + 1, SOURCE);
    }
    for (int i = 0; i < hashes.length; i += 3) {
      assertThat(d.remove(hashes[i], key(i), SOURCE)).isEqualTo(i + 1);
    }
    for (int i = 0; i < hashes.length; i++) {
      assertThat(d.find(hashes[i], key(i), SOURCE))
          .as("key %d", i)
          .isEqualTo(i % 3 == 0 ? 0 : i + 1);
    }
  }
}
