package io.kv4j.typed;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.UUID;

/**
 * The tuple order written from its specification (Tuple's class comment), element by element and
 * without looking at any encoding, plus a generator of random tuples full of edge values. The
 * property tests hold the encoding to this model.
 */
final class TupleModel {
  private TupleModel() {}

  /** FoundationDB's type code order: the rank of each element type. */
  static int typeRank(Object o) {
    if (o == null) {
      return 0x00;
    } else if (o instanceof byte[]) {
      return 0x01;
    } else if (o instanceof String) {
      return 0x02;
    } else if (o instanceof Tuple) {
      return 0x05;
    } else if (o instanceof Long) {
      return 0x14;
    } else if (o instanceof Float) {
      return 0x20;
    } else if (o instanceof Double) {
      return 0x21;
    } else if (o instanceof Boolean) {
      return 0x26;
    } else if (o instanceof UUID) {
      return 0x30;
    }
    throw new AssertionError("not a tuple element: " + o.getClass());
  }

  static int compare(Tuple a, Tuple b) {
    int n = Math.min(a.size(), b.size());
    for (int i = 0; i < n; i++) {
      int c = compareElements(a.get(i), b.get(i));
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(a.size(), b.size()); // a prefix first
  }

  static int compareElements(Object x, Object y) {
    int rx = typeRank(x);
    int ry = typeRank(y);
    if (rx != ry) {
      return Integer.compare(rx, ry);
    }
    if (x == null) {
      return 0;
    } else if (x instanceof byte[] a) {
      byte[] b = (byte[]) y;
      for (int i = 0; i < Math.min(a.length, b.length); i++) {
        int c = Integer.compare(a[i] & 0xFF, b[i] & 0xFF);
        if (c != 0) {
          return c;
        }
      }
      return Integer.compare(a.length, b.length);
    } else if (x instanceof String a) {
      int[] p = a.codePoints().toArray();
      int[] q = ((String) y).codePoints().toArray();
      for (int i = 0; i < Math.min(p.length, q.length); i++) {
        if (p[i] != q[i]) {
          return Integer.compare(p[i], q[i]);
        }
      }
      return Integer.compare(p.length, q.length);
    } else if (x instanceof Tuple a) {
      return compare(a, (Tuple) y);
    } else if (x instanceof Long a) {
      return Long.compare(a, (Long) y);
    } else if (x instanceof Float a) {
      float b = (Float) y;
      return totalOrder(
          Float.isNaN(a),
          Float.isNaN(b),
          Float.floatToRawIntBits(a) < 0,
          Float.floatToRawIntBits(b) < 0,
          Float.compare(a, b),
          Float.floatToRawIntBits(a) & 0x7FFFFF,
          Float.floatToRawIntBits(b) & 0x7FFFFF);
    } else if (x instanceof Double a) {
      double b = (Double) y;
      return totalOrder(
          Double.isNaN(a),
          Double.isNaN(b),
          Double.doubleToRawLongBits(a) < 0,
          Double.doubleToRawLongBits(b) < 0,
          Double.compare(a, b),
          Double.doubleToRawLongBits(a) & 0xFFFFFFFFFFFFFL,
          Double.doubleToRawLongBits(b) & 0xFFFFFFFFFFFFFL);
    } else if (x instanceof Boolean a) {
      return Boolean.compare(a, (Boolean) y); // false < true
    } else {
      UUID a = (UUID) x;
      UUID b = (UUID) y;
      int c = Long.compareUnsigned(a.getMostSignificantBits(), b.getMostSignificantBits());
      return c != 0
          ? c
          : Long.compareUnsigned(a.getLeastSignificantBits(), b.getLeastSignificantBits());
    }
  }

  /**
   * IEEE 754 total order: negative NaNs (bigger payload first), then the numbers as Double.compare
   * orders them (-0.0 before 0.0), then positive NaNs (bigger payload last).
   */
  private static int totalOrder(
      boolean nanA,
      boolean nanB,
      boolean negA,
      boolean negB,
      int numeric,
      long payloadA,
      long payloadB) {
    if (!nanA && !nanB) {
      return Integer.signum(numeric);
    }
    int classA = nanA ? (negA ? -1 : 1) : 0;
    int classB = nanB ? (negB ? -1 : 1) : 0;
    if (classA != classB) {
      return Integer.compare(classA, classB);
    }
    return classA < 0 ? Long.compare(payloadB, payloadA) : Long.compare(payloadA, payloadB);
  }

  /** Element-wise equality: byte arrays by content, floating point by bits. */
  static boolean deepEquals(Tuple a, Tuple b) {
    if (a.size() != b.size()) {
      return false;
    }
    for (int i = 0; i < a.size(); i++) {
      if (!elementEquals(a.get(i), b.get(i))) {
        return false;
      }
    }
    return true;
  }

  static boolean elementEquals(Object x, Object y) {
    if (x == null || y == null) {
      return x == y;
    }
    if (x.getClass() != y.getClass()) {
      return false;
    }
    if (x instanceof byte[] a) {
      return Arrays.equals(a, (byte[]) y);
    }
    if (x instanceof Double a) {
      return Double.doubleToRawLongBits(a) == Double.doubleToRawLongBits((Double) y);
    }
    if (x instanceof Float a) {
      return Float.floatToRawIntBits(a) == Float.floatToRawIntBits((Float) y);
    }
    if (x instanceof Tuple a) {
      return deepEquals(a, (Tuple) y);
    }
    return x.equals(y);
  }

  static boolean startsWith(Tuple t, Tuple prefix) {
    if (prefix.size() > t.size()) {
      return false;
    }
    for (int i = 0; i < prefix.size(); i++) {
      if (!elementEquals(t.get(i), prefix.get(i))) {
        return false;
      }
    }
    return true;
  }

  // ---- generator -------------------------------------------------------------------------

  private static final long[] LONGS = {
    Long.MIN_VALUE,
    Long.MIN_VALUE + 1,
    Long.MAX_VALUE,
    Long.MAX_VALUE - 1,
    0,
    1,
    -1,
    255,
    -255,
    256,
    -256,
    65535,
    -65535,
    65536,
    -65536,
    Integer.MAX_VALUE,
    Integer.MIN_VALUE,
    1L << 56,
    -(1L << 56),
    (1L << 56) - 1,
    -((1L << 56) - 1)
  };

  private static final double[] DOUBLES = {
    0.0,
    -0.0,
    Double.NaN,
    Double.longBitsToDouble(0xFFF8000000000000L), // a negative NaN
    Double.longBitsToDouble(0x7FF8000000000001L), // a NaN with a payload
    Double.longBitsToDouble(0xFFF8000000000001L),
    Double.POSITIVE_INFINITY,
    Double.NEGATIVE_INFINITY,
    Double.MIN_VALUE,
    -Double.MIN_VALUE,
    Double.MAX_VALUE,
    -Double.MAX_VALUE,
    1.0,
    -1.0,
    Math.nextUp(1.0),
    3.14
  };

  private static final float[] FLOATS = {
    0f,
    -0f,
    Float.NaN,
    Float.intBitsToFloat(0xFFC00000), // a negative NaN
    Float.intBitsToFloat(0x7FC00001),
    Float.POSITIVE_INFINITY,
    Float.NEGATIVE_INFINITY,
    Float.MIN_VALUE,
    -Float.MIN_VALUE,
    Float.MAX_VALUE,
    1f,
    -1f,
    3.14f
  };

  private static final String[] CHARS = {
    "\0",
    "a",
    "b",
    "z",
    "\u007f",
    "\u0080",
    "\u00e9",
    "\u07ff",
    "\u0800",
    "\ue000",
    "\uffff",
    "\ud800\udc00",
    "\ud83d\ude00",
    "\udbff\udfff",
    "\u4e2d"
  };

  private static final byte[] BYTES = {0, (byte) 0xFF, 1, (byte) 0xFE, 0x7F, (byte) 0x80, 2};

  static Tuple randomTuple(Random r, int depth) {
    int n = r.nextInt(depth == 0 ? 5 : 4);
    List<Object> items = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      items.add(randomElement(r, depth));
    }
    return Tuple.fromList(items);
  }

  static Object randomElement(Random r, int depth) {
    switch (r.nextInt(depth < 2 ? 11 : 10)) {
      case 0:
        return null;
      case 1:
        {
          byte[] b = new byte[r.nextInt(5)];
          for (int i = 0; i < b.length; i++) {
            b[i] = r.nextInt(3) == 0 ? (byte) r.nextInt(256) : BYTES[r.nextInt(BYTES.length)];
          }
          return b;
        }
      case 2:
        {
          StringBuilder sb = new StringBuilder();
          for (int i = r.nextInt(4); i > 0; i--) {
            sb.append(CHARS[r.nextInt(CHARS.length)]);
          }
          return sb.toString();
        }
      case 3:
        return randomLong(r);
      case 4:
        return (int) randomLong(r); // an int, read back as a long
      case 5:
        return r.nextBoolean()
            ? FLOATS[r.nextInt(FLOATS.length)]
            : Float.intBitsToFloat(r.nextInt());
      case 6:
        return r.nextBoolean()
            ? DOUBLES[r.nextInt(DOUBLES.length)]
            : (r.nextBoolean() ? Double.longBitsToDouble(r.nextLong()) : r.nextGaussian() * 1e6);
      case 7:
        return r.nextBoolean();
      case 8:
        {
          long[] edges = {0, -1, Long.MIN_VALUE, Long.MAX_VALUE, 1};
          long msb = r.nextBoolean() ? edges[r.nextInt(edges.length)] : r.nextLong();
          long lsb = r.nextBoolean() ? edges[r.nextInt(edges.length)] : r.nextLong();
          return new UUID(msb, lsb);
        }
      case 9:
        return r.nextBoolean() ? "" : new byte[0];
      default:
        return randomTuple(r, depth + 1);
    }
  }

  private static long randomLong(Random r) {
    switch (r.nextInt(3)) {
      case 0:
        return LONGS[r.nextInt(LONGS.length)];
      case 1:
        return r.nextLong() >> r.nextInt(64); // every byte length, both signs
      default:
        return r.nextInt(601) - 300;
    }
  }

  /**
   * A tuple near {@code a}: most of the time sharing a prefix with it and differing by a small step
   * at the next element, so comparisons reach deep into both tuples.
   */
  static Tuple neighbour(Random r, Tuple a, int depth) {
    switch (r.nextInt(6)) {
      case 0:
        return randomTuple(r, depth);
      case 1:
        return Tuple.fromList(a.items());
      default:
        {
          int k = a.isEmpty() ? 0 : r.nextInt(a.size() + 1);
          List<Object> items = new ArrayList<>(a.items().subList(0, k));
          if (k < a.size() && r.nextBoolean()) {
            items.add(nudge(r, a.get(k), depth));
          }
          for (int i = r.nextInt(3); i > 0; i--) {
            items.add(randomElement(r, depth));
          }
          return Tuple.fromList(items);
        }
    }
  }

  private static Object nudge(Random r, Object x, int depth) {
    if (x instanceof Long v) {
      return v + (r.nextBoolean() ? 1 : -1);
    } else if (x instanceof byte[] b) {
      byte[] c = Arrays.copyOf(b, b.length + (r.nextBoolean() ? 1 : 0));
      if (c.length > b.length) {
        c[b.length] = BYTES[r.nextInt(2)]; // append 0x00 or 0xFF
      } else if (c.length > 0) {
        c[c.length - 1] ^= 1;
      }
      return c;
    } else if (x instanceof String s) {
      return r.nextBoolean() ? s + CHARS[r.nextInt(CHARS.length)] : s.isEmpty() ? "\0" : "";
    } else if (x instanceof Double d) {
      return r.nextBoolean() ? Math.nextUp(d) : -d;
    } else if (x instanceof Float f) {
      return r.nextBoolean() ? Math.nextDown(f) : -f;
    } else if (x instanceof Boolean b) {
      return !b;
    } else if (x instanceof UUID u) {
      return new UUID(u.getMostSignificantBits(), u.getLeastSignificantBits() + 1);
    } else if (x instanceof Tuple t) {
      return neighbour(r, t, depth + 1);
    }
    return r.nextBoolean() ? null : new byte[0];
  }
}
