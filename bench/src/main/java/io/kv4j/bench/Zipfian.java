package io.kv4j.bench;

/**
 * YCSB's zipfian generator (Gray et al., "Quickly generating billion-record synthetic databases"):
 * item 0 is the most popular. Immutable; callers pass their own uniform random number, so one
 * instance serves every thread.
 *
 * <p>Two ways to spread the popular items over a key space with an FNV-1a hash: {@link #scrambled}
 * hashes a rank of this generator's own items (the catalogue's scenarios: zipfian over the loaded
 * keys, then hashed), and {@link #YCSB_SCRAMBLED} with {@link #hashedOnto} is YCSB's {@code
 * ScrambledZipfianGenerator} exactly: a rank among 10^10 items (with YCSB's precomputed zeta),
 * hashed and reduced modulo the key count, which makes the hottest key about half as hot as the
 * first way does at 100,000 keys (3.8% against 7.8% of the draws). {@code --workload} runs use
 * YCSB's.
 */
final class Zipfian {
  /** YCSB's default skew (its {@code ZIPFIAN_CONSTANT}). */
  static final double THETA = 0.99;

  /** The items YCSB's {@code ScrambledZipfianGenerator} draws a rank among before hashing. */
  static final long YCSB_ITEMS = 10_000_000_000L;

  /** zeta(10^10, 0.99), as YCSB precomputes it ({@code ScrambledZipfianGenerator.ZETAN}). */
  static final double YCSB_ZETAN = 26.46902820178302;

  /** YCSB's scrambled zipfian: ranks among {@link #YCSB_ITEMS}, for {@link #hashedOnto}. */
  static final Zipfian YCSB_SCRAMBLED = new Zipfian(YCSB_ITEMS, THETA, YCSB_ZETAN);

  private final long items;
  private final double theta;
  private final double zetan;
  private final double alpha;
  private final double eta;
  private final double half;

  Zipfian(long items, double theta) {
    this(items, theta, zeta(checked(items), theta));
  }

  /** With zeta(items, theta) given: YCSB precomputes it where summing is too slow. */
  Zipfian(long items, double theta, double zetan) {
    checked(items);
    this.items = items;
    this.theta = theta;
    this.zetan = zetan;
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

  /**
   * A key index in [0, n) as YCSB's {@code ScrambledZipfianGenerator} draws it: a rank of this
   * generator, FNV-hashed ({@code Utils.fnvhash64}, which takes the absolute value) and reduced
   * modulo {@code n}.
   *
   * @param n the key count
   * @param u a uniform draw in [0, 1)
   * @return the key index
   */
  long hashedOnto(long n, double u) {
    long h = Math.abs(fnv64(next(u)));
    return h < 0 ? Math.floorMod(h, n) : h % n; // h < 0 only for Long.MIN_VALUE
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

  private static long checked(long items) {
    if (items < 1) {
      throw new IllegalArgumentException("zipfian needs at least one item, got " + items);
    }
    return items;
  }

  /**
   * zeta(n, theta) = the sum of 1 / i^theta for i = 1..n: the zipfian's normalising constant (item
   * 0's share of the draws is its inverse).
   *
   * @param n the items
   * @param theta the skew
   * @return the sum
   */
  static double zeta(long n, double theta) {
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
