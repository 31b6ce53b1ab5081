package io.kv4j.typed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.kv4j.KeyRange;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The encoding against the model of {@link TupleModel}: for random pairs of tuples full of edge
 * values and shared prefixes, the unsigned order of the encodings is the model's order, decoding
 * gives back every element exactly, and {@link Tuple#range()} holds exactly the tuples that start
 * with the prefix.
 */
class TupleOrderPropertyTest {
  private static final int PAIRS = 100_000;
  private static final HexFormat HEX = HexFormat.of();

  @Test
  void encodingOrder_matchesModelOrderForRandomPairs() {
    long seed = 0x7A91E5EEDL;
    Random r = new Random(seed);
    int equal = 0;
    int decidedDeep = 0;
    for (int i = 0; i < PAIRS; i++) {
      Tuple a = TupleModel.randomTuple(r, 0);
      Tuple b = TupleModel.neighbour(r, a, 0);
      byte[] ea = a.pack();
      byte[] eb = b.pack();
      int model = Integer.signum(TupleModel.compare(a, b));
      boolean same = TupleModel.deepEquals(a, b);
      // Checked without AssertJ on the happy path (100,000 pairs); any mismatch fails with the
      // seed, the pair and both encodings.
      check(Integer.signum(Arrays.compareUnsigned(ea, eb)) == model, "byte order", seed, i, a, b);
      check(Integer.signum(a.compareTo(b)) == model, "compareTo", seed, i, a, b);
      check(a.equals(b) == same, "equals", seed, i, a, b);
      check((model == 0) == same, "model order vs equality", seed, i, a, b);
      Tuple da = Tuple.unpack(ea);
      check(TupleModel.deepEquals(da, a), "decode(encode(a)) = " + da, seed, i, a, b);
      check(da.equals(a) && Arrays.equals(da.pack(), ea), "re-encode a", seed, i, a, b);
      check(TupleModel.deepEquals(Tuple.unpack(eb), b), "decode(encode(b))", seed, i, a, b);

      // a prefix of a, and whether b starts with it
      Tuple p = Tuple.fromList(a.items().subList(0, r.nextInt(a.size() + 1)));
      boolean starts = TupleModel.startsWith(b, p);
      KeyRange range = p.range();
      check(range.contains(eb) == starts, "b in the range of " + p, seed, i, a, b);
      check(b.startsWith(p) == starts, "b starts with " + p, seed, i, a, b);
      check(range.contains(ea), "a in the range of its prefix " + p, seed, i, a, b);

      equal += model == 0 ? 1 : 0;
      decidedDeep += firstDifference(a, b) >= 1 ? 1 : 0;
    }
    // The generator must exercise the interesting cases, or the test proves little.
    assertThat(equal).as("equal pairs, seed " + seed).isGreaterThan(PAIRS / 50);
    assertThat(decidedDeep)
        .as("pairs decided past the first element, seed " + seed)
        .isGreaterThan(PAIRS / 5);
  }

  private static void check(boolean ok, String what, long seed, int pair, Tuple a, Tuple b) {
    if (!ok) {
      fail(
          what
              + " is wrong for seed "
              + seed
              + ", pair "
              + pair
              + ": a="
              + a
              + " ["
              + HEX.formatHex(a.pack())
              + "], b="
              + b
              + " ["
              + HEX.formatHex(b.pack())
              + "], model says "
              + TupleModel.compare(a, b));
    }
  }

  private static int firstDifference(Tuple a, Tuple b) {
    int n = Math.min(a.size(), b.size());
    for (int i = 0; i < n; i++) {
      if (!TupleModel.elementEquals(a.get(i), b.get(i))) {
        return i;
      }
    }
    return n;
  }

  @Test
  void encodingOrder_sortsASampleLikeTheModel() {
    long seed = 4711;
    Random r = new Random(seed);
    Tuple[] tuples = new Tuple[2000];
    for (int i = 0; i < tuples.length; i++) {
      tuples[i] =
          i > 0 && r.nextBoolean()
              ? TupleModel.neighbour(r, tuples[r.nextInt(i)], 0)
              : TupleModel.randomTuple(r, 0);
    }
    Tuple[] byModel = tuples.clone();
    Arrays.sort(byModel, TupleModel::compare);
    byte[][] encoded = Arrays.stream(tuples).map(Tuple::pack).toArray(byte[][]::new);
    Arrays.sort(encoded, Arrays::compareUnsigned);
    for (int i = 0; i < tuples.length; i++) {
      assertThat(TupleModel.deepEquals(Tuple.unpack(encoded[i]), byModel[i]))
          .as("seed " + seed + ", position " + i + ": " + byModel[i])
          .isTrue();
    }
  }
}
