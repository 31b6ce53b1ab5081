package io.kv4j.hashlog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MappingsTest {
  @TempDir Path tmp;

  private long mappingsOf(Path file) throws IOException {
    String f = file.toRealPath().toString();
    return Files.readAllLines(Path.of("/proc/self/maps")).stream()
        .filter(l -> l.endsWith(f))
        .count();
  }

  private MappedByteBuffer map(Path file) throws IOException {
    Files.write(file, new byte[8192]);
    try (FileChannel ch =
        FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      return Mappings.map(ch, FileChannel.MapMode.READ_WRITE, 8192);
    }
  }

  @Test
  void unmap_releasesTheMappingAtOnce() throws IOException {
    Path file = tmp.resolve("m");
    MappedByteBuffer b = map(file);
    b.putInt(4096, 42);
    b.force(0, 8192);
    assertThat(mappingsOf(file)).isEqualTo(1);
    Mappings.unmap(b);
    assertThat(mappingsOf(file)).as("mapping left after unmap").isZero();
    try (FileChannel ch = FileChannel.open(file)) {
      assertThat(ch.map(FileChannel.MapMode.READ_ONLY, 0, 8192).getInt(4096)).isEqualTo(42);
    }
  }

  @Test
  void accessAfterUnmap_onJava22AndLater_throwsInsteadOfCrashing() throws IOException {
    assumeTrue(
        Mappings.usesArenas(),
        "Java " + Runtime.version().feature() + " unmaps with Unsafe.invokeCleaner: no arena");
    MappedByteBuffer b = map(tmp.resolve("m"));
    Mappings.unmap(b);
    assertThatThrownBy(() -> b.getInt(0)).isInstanceOf(IllegalStateException.class);
  }
}
