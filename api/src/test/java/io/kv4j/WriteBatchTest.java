package io.kv4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class WriteBatchTest {
  @Test
  void put_copiesArguments() {
    byte[] k = {1};
    byte[] v = {2};
    WriteBatch b = new WriteBatch().put(k, v);
    k[0] = 9;
    v[0] = 9;
    assertThat(b.key(0)).containsExactly(1);
    assertThat(b.value(0)).containsExactly(2);
  }

  @Test
  void delete_isMarkedAndCounted() {
    WriteBatch b = new WriteBatch().put(new byte[] {1}, new byte[3]).delete(new byte[] {1, 2});
    assertThat(b.size()).isEqualTo(2);
    assertThat(b.isDelete(1)).isTrue();
    assertThat(b.value(1)).isNull();
    assertThat(b.byteSize()).isEqualTo(1 + 3 + 2);
    b.clear();
    assertThat(b.isEmpty()).isTrue();
    assertThat(b.byteSize()).isZero();
  }

  @Test
  void put_emptyOrNullKey_isRejected() {
    WriteBatch b = new WriteBatch();
    assertThatThrownBy(() -> b.put(new byte[0], new byte[0]))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> b.put(null, new byte[0])).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> b.put(new byte[1], null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> b.delete(null)).isInstanceOf(NullPointerException.class);
    assertThat(b.isEmpty()).isTrue();
  }

  @Test
  void expect_copiesArgumentsAndClearForgetsThem() {
    byte[] k = {1};
    byte[] v = {2};
    WriteBatch b = new WriteBatch().expect(k, v).expectAbsent("users", new byte[] {3});
    k[0] = 9;
    v[0] = 9;
    assertThat(b.hasConditions()).isTrue();
    assertThat(b.conditionCount()).isEqualTo(2);
    assertThat(b.size()).isZero();
    assertThat(b.conditionKey(0)).containsExactly(1);
    assertThat(b.conditionValue(0)).containsExactly(2);
    assertThat(b.conditionKeyspace(0)).isNull();
    assertThat(b.conditionValue(1)).isNull();
    assertThat(b.conditionKeyspace(1)).isEqualTo("users");
    assertThat(b).hasToString("WriteBatch[0 operations, 0 bytes, 2 conditions]");
    b.clear();
    assertThat(b.hasConditions()).isFalse();
    assertThat(b.conditionCount()).isZero();
  }

  @Test
  void expect_badArguments_areRejected() {
    WriteBatch b = new WriteBatch();
    assertThatThrownBy(() -> b.expect(new byte[0], new byte[0]))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> b.expect(new byte[] {1}, null))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> b.expectAbsent("bad name!", new byte[] {1}))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(b.hasConditions()).isFalse();
  }
}
