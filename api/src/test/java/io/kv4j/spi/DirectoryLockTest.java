package io.kv4j.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kv4j.StoreIOException;
import io.kv4j.StoreLockedException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DirectoryLockTest {
  @TempDir Path dir;

  @Test
  void acquire_twiceInOneJvm_isLockedNamingTheDirectory() {
    try (DirectoryLock lock = DirectoryLock.acquire(dir, "test")) {
      assertThat(lock.directory()).isEqualTo(dir.toAbsolutePath());
      assertThatThrownBy(() -> DirectoryLock.acquire(dir, "test"))
          .isInstanceOf(StoreLockedException.class)
          .hasMessageContaining(dir.toString())
          .hasMessageContaining("engine 'test'");
    }
  }

  @Test
  void close_isIdempotentAndReleases() {
    DirectoryLock lock = DirectoryLock.acquire(dir, "test");
    lock.close();
    lock.close();
    try (DirectoryLock again = DirectoryLock.acquire(dir, "test")) {
      assertThat(again.directory()).isEqualTo(dir.toAbsolutePath());
    }
  }

  @Test
  void acquire_missingDirectory_isStoreIOException() {
    assertThatThrownBy(() -> DirectoryLock.acquire(dir.resolve("missing"), "test"))
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining("missing");
  }
}
