package io.kv4j.bench;

/**
 * YCSB's zipfian generator (Gray et al., "Quickly generating billion-record synthetic databases"):
 * item 0 is the most popular. {@link #scrambled} spreads the popular items over the key space with
 * an FNV-1a hash, as YCSB's ScrambledZipfianGenerator does. Immutable; callers pass their own
 * uniform random number, so one instance serves every thread.
 */
final class Zipfian {
  /** YCSB's default skew. */
  static final double THETA = 0.99;

  private final long items;
  private final double theta;
  private final double zetan;
  private final double alpha;
  private final double eta;
  private final double half;

  Zipfian(long items, double theta) {
    if (items < 1) {
      throw new IllegalArgumentException("zipfian needs at least one item, got " + items);
    }
    this.items = items;
    this.theta = theta;
    this.zetan = zeta(items, theta);
    double zeta2 = zeta(2, theta);
    this.alpha = 1.0 / (1.0 - theta);
    this.eta = (1 - Math.pow(2.0 / items, 1 - theta)) / (1 - zeta2 / zetan);
    this.half = 1 + Math.pow(0.5, theta);
  }

  long items() {
    return items;
  }

  /** A rank in [0, items), 0 the most frequent, from a uniform u in [0, 1). */
  long next(double u) {
    double uz = u * zetan;
    if (uz < 1.0) {
      return 0;
    }
    if (uz < half) {
      return 1;
    }
    long r = (long) (items * Math.pow(eta * u - eta + 1, alpha));
    return Math.min(r, items - 1);
  }

  /** A key index in [0, items) with zipfian popularity spread over the key space. */
  long scrambled(double u) {
    return Math.floorMod(fnv64(next(u)), items);
  }

  static long fnv64(long v) {
    long h = 0xCBF29CE484222325L;
    for (int i = 0; i < 8; i++) {
      h ^= v & 0xff;
      h *= 0x100000001B3L;
      v >>>= 8;
    }
    return h;
  }

  private static double zeta(long n, double theta) {
    double sum = 0;
    for (long i = 0; i < n; i++) {
      sum += 1 / Math.pow(i + 1, theta);
    }
    return sum;
  }

  @Override
  public String toString() {
    return "zipfian(" + items + ", " + theta + ")";
  }
}
