package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class DataTest {
  private final Data data = new Data(16, 1024, false, 7);

  @Test
  void key_isBigEndianIndexPlusPadding_soUnsignedOrderIsIndexOrder() {
    long[] idx = {0, 1, 127, 128, 255, 256, 65_535, 1L << 32, Long.MAX_VALUE};
    for (int i = 1; i < idx.length; i++) {
      assertThat(Arrays.compareUnsigned(data.key(idx[i - 1]), data.key(idx[i])))
          .as("%d < %d", idx[i - 1], idx[i])
          .isNegative();
    }
    assertThat(data.key(5)).hasSize(16);
    assertThat(Data.indexOf(data.key(123_456))).isEqualTo(123_456);
  }

  @Test
  void verify_acceptsAnyVersionWrittenForTheKey() {
    data.verify(9, data.value(9, 1));
    data.verify(9, data.value(9, -77));
  }

  @Test
  void verify_rejectsMissingForeignTruncatedAndCorruptValues() {
    assertThatThrownBy(() -> data.verify(9, null)).hasMessageContaining("missing");
    assertThatThrownBy(() -> data.verify(9, data.value(10, 1))).hasMessageContaining("key 10");
    assertThatThrownBy(() -> data.verify(9, Arrays.copyOf(data.value(9, 1), 1000)))
        .hasMessageContaining("1000 bytes");
    byte[] v = data.value(9, 1);
    v[500] ^= 0x40;
    assertThatThrownBy(() -> data.verify(9, v)).hasMessageContaining("corrupt");
  }

  @Test
  void values_areIncompressibleByDefault_andCompressibleOnRequest() throws Exception {
    assertThat(deflatedRatio(new Data(16, 4096, false, 1).value(3, 3))).isGreaterThan(0.95);
    assertThat(deflatedRatio(new Data(16, 4096, true, 1).value(3, 3))).isLessThan(0.7);
  }

  private static double deflatedRatio(byte[] v) {
    java.util.zip.Deflater d = new java.util.zip.Deflater();
    d.setInput(v);
    d.finish();
    byte[] out = new byte[v.length * 2];
    int n = d.deflate(out);
    d.end();
    return (double) n / v.length;
  }
}
