package io.kv4j.hashlog;

/** Merge sort of primitive {@code long}s with a caller's comparator: no boxing, stable. */
final class LongSort {
  /** Compares two longs. */
  interface Comparator {
    int compare(long a, long b);
  }

  private LongSort() {}

  static void sort(long[] a, Comparator c) {
    if (a.length < 2) {
      return;
    }
    long[] tmp = a.clone();
    sort(tmp, a, 0, a.length, c);
  }

  /** Sorts src[lo,hi) into dst[lo,hi); src and dst hold the same values on entry. */
  private static void sort(long[] src, long[] dst, int lo, int hi, Comparator c) {
    int n = hi - lo;
    if (n <= 16) {
      for (int i = lo + 1; i < hi; i++) {
        long x = dst[i];
        int j = i - 1;
        while (j >= lo && c.compare(dst[j], x) > 0) {
          dst[j + 1] = dst[j];
          j--;
        }
        dst[j + 1] = x;
      }
      return;
    }
    int mid = (lo + hi) >>> 1;
    sort(dst, src, lo, mid, c);
    sort(dst, src, mid, hi, c);
    if (c.compare(src[mid - 1], src[mid]) <= 0) {
      System.arraycopy(src, lo, dst, lo, n);
      return;
    }
    int i = lo;
    int j = mid;
    for (int k = lo; k < hi; k++) {
      if (j >= hi || (i < mid && c.compare(src[i], src[j]) <= 0)) {
        dst[k] = src[i++];
      } else {
        dst[k] = src[j++];
      }
    }
  }

  /**
   * Sorts {@code a} by ({@code prefix} unsigned, then {@code c}), moving both arrays together. With
   * the first 8 key bytes as prefix most comparisons never touch the keys themselves.
   */
  static void sort(long[] a, long[] prefix, Comparator c) {
    if (a.length < 2) {
      return;
    }
    sort(a.clone(), prefix.clone(), a, prefix, 0, a.length, c);
  }

  private static int cmp(long[] a, long[] p, int i, int j, Comparator c) {
    int r = Long.compareUnsigned(p[i], p[j]);
    return r != 0 ? r : c.compare(a[i], a[j]);
  }

  private static void sort(
      long[] sa, long[] sp, long[] da, long[] dp, int lo, int hi, Comparator c) {
    int n = hi - lo;
    if (n <= 16) {
      for (int i = lo + 1; i < hi; i++) {
        long x = da[i];
        long px = dp[i];
        int j = i - 1;
        while (j >= lo) {
          int r = Long.compareUnsigned(dp[j], px);
          if (r < 0 || (r == 0 && c.compare(da[j], x) <= 0)) {
            break;
          }
          da[j + 1] = da[j];
          dp[j + 1] = dp[j];
          j--;
        }
        da[j + 1] = x;
        dp[j + 1] = px;
      }
      return;
    }
    int mid = (lo + hi) >>> 1;
    sort(da, dp, sa, sp, lo, mid, c);
    sort(da, dp, sa, sp, mid, hi, c);
    if (cmp(sa, sp, mid - 1, mid, c) <= 0) {
      System.arraycopy(sa, lo, da, lo, n);
      System.arraycopy(sp, lo, dp, lo, n);
      return;
    }
    int i = lo;
    int j = mid;
    for (int k = lo; k < hi; k++) {
      if (j >= hi || (i < mid && cmp(sa, sp, i, j, c) <= 0)) {
        da[k] = sa[i];
        dp[k] = sp[i++];
      } else {
        da[k] = sa[j];
        dp[k] = sp[j++];
      }
    }
  }
}
