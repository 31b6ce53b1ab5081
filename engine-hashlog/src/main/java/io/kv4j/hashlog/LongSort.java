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
}
