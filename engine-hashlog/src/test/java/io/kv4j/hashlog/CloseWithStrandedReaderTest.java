package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.Durability;
import io.kv4j.StoreClosedException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A reader whose exit was skipped (an asynchronous fault on a mapped page can land between a
 * reader's entry and its exit) must not wedge the store's close: the close ends, and leaves the
 * mappings to the garbage collector rather than unmapping them under a reader that may be inside.
 */
final class CloseWithStrandedReaderTest {
  @TempDir Path dir;

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void close_readerNeverExits_endsAndKeepsTheMappings() {
    HashLogStore s = TestStores.open(dir, Durability.BUFFERED);
    s.put(TestStores.bytes("k"), TestStores.bytes("v"));
    s.guard.closeWaitNanos = TimeUnit.MILLISECONDS.toNanos(100);
    s.guard.enter(); // a reader that never leaves

    s.close();

    assertThat(s.segments.mappingsKept()).as("mappings left to the GC, not unmapped").isTrue();
    assertThatThrownBy(() -> s.get(TestStores.bytes("k"))).isInstanceOf(StoreClosedException.class);
    try (HashLogStore again = TestStores.open(dir, Durability.BUFFERED)) {
      assertThat(again.get(TestStores.bytes("k"))).isEqualTo(TestStores.bytes("v"));
    }
  }

  @Test
  void close_everyReaderLeft_unmapsAsUsual() {
    HashLogStore s = TestStores.open(dir, Durability.BUFFERED);
    s.put(TestStores.bytes("k"), TestStores.bytes("v"));
    int token = s.guard.enter();
    s.guard.exit(token);

    s.close();

    assertThat(s.segments.mappingsKept()).isFalse();
  }
}
