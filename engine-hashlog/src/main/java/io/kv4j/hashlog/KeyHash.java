package io.kv4j.hashlog;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/** A fast seeded 64-bit hash of a byte array, for the in-memory index only (never stored). */
final class KeyHash {
  private static final VarHandle LONG_LE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final long P1 = 0x9E3779B97F4A7C15L;
  private static final long P2 = 0xC2B2AE3D27D4EB4FL;

  private KeyHash() {}

  static long hash(byte[] key, long seed) {
    int n = key.length;
    long h = seed ^ (n * P1);
    int i = 0;
    for (; i + 8 <= n; i += 8) {
      long k = (long) LONG_LE.get(key, i) * P2;
      h = Long.rotateLeft(h ^ Long.rotateLeft(k, 31) * P1, 27) * P1 + 0x52DCE729L;
    }
    long t = 0;
    for (int s = 0; i < n; i++, s += 8) {
      t |= (key[i] & 0xFFL) << s;
    }
    h ^= Long.rotateLeft(t * P2, 31) * P1;
    h ^= h >>> 33;
    h *= 0xFF51AFD7ED558CCDL;
    h ^= h >>> 33;
    h *= 0xC4CEB9FE1A85EC53L;
    h ^= h >>> 33;
    return h;
  }
}
