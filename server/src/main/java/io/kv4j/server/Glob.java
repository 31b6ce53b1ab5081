package io.kv4j.server;

import java.util.Arrays;

/**
 * Redis glob patterns on bytes: {@code *}, {@code ?}, {@code [abc]}, {@code [^a]}, {@code [a-z]}
 * and {@code \} escapes. Matching backtracks only to the last star, so it is O(pattern * key).
 */
final class Glob {
  private final byte[] p;
  private final boolean matchAll;

  Glob(byte[] pattern) {
    this.p = pattern;
    this.matchAll = pattern.length == 1 && pattern[0] == '*';
  }

  boolean matchesAll() {
    return matchAll;
  }

  /** The literal bytes every match starts with (for a prefix scan). */
  byte[] literalPrefix() {
    int i = 0;
    while (i < p.length && p[i] != '*' && p[i] != '?' && p[i] != '[' && p[i] != '\\') {
      i++;
    }
    return Arrays.copyOf(p, i);
  }

  boolean matches(byte[] s) {
    if (matchAll) {
      return true;
    }
    int pi = 0;
    int si = 0;
    int starP = -1;
    int starS = -1;
    while (si < s.length) {
      if (pi < p.length && p[pi] == '*') {
        while (pi < p.length && p[pi] == '*') {
          pi++;
        }
        if (pi == p.length) {
          return true;
        }
        starP = pi;
        starS = si;
        continue;
      }
      int next = pi < p.length ? matchOne(pi, s[si]) : -1;
      if (next >= 0) {
        pi = next;
        si++;
      } else if (starP >= 0) {
        pi = starP;
        si = ++starS;
      } else {
        return false;
      }
    }
    while (pi < p.length && p[pi] == '*') {
      pi++;
    }
    return pi == p.length;
  }

  /** Matches one byte against the pattern element at pi; returns the next index or -1. */
  private int matchOne(int pi, byte c) {
    byte t = p[pi];
    if (t == '?') {
      return pi + 1;
    }
    if (t == '\\' && pi + 1 < p.length) {
      return p[pi + 1] == c ? pi + 2 : -1;
    }
    if (t == '[') {
      int i = pi + 1;
      boolean not = i < p.length && p[i] == '^';
      if (not) {
        i++;
      }
      boolean match = false;
      int cu = c & 0xFF;
      while (i < p.length && p[i] != ']') {
        if (p[i] == '\\' && i + 1 < p.length) {
          if (p[i + 1] == c) {
            match = true;
          }
          i += 2;
        } else if (i + 2 < p.length && p[i + 1] == '-' && p[i + 2] != ']') {
          int lo = p[i] & 0xFF;
          int hi = p[i + 2] & 0xFF;
          if (lo > hi) {
            int x = lo;
            lo = hi;
            hi = x;
          }
          if (cu >= lo && cu <= hi) {
            match = true;
          }
          i += 3;
        } else {
          if (p[i] == c) {
            match = true;
          }
          i++;
        }
      }
      // i is at ']' or past the end (an unterminated class runs to the end, as in Redis)
      int next = i < p.length ? i + 1 : i;
      return match != not ? next : -1;
    }
    return t == c ? pi + 1 : -1;
  }
}
