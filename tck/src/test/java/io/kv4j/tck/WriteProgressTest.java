package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WriteProgressTest {
  @TempDir Path dir;

  @Test
  void parse_findsWcharAmongTheOtherFields() {
    byte[] text =
        "rchar: 1580\nwchar: 123456789\nsyscr: 5\nsyscw: 0\n".getBytes(StandardCharsets.US_ASCII);
    assertThat(WriteProgress.parse(text, text.length)).isEqualTo(123_456_789L);
  }

  @Test
  void parse_withoutTheField_isMinusOne() {
    byte[] text = "rchar: 1580\nsyscr: 5\n".getBytes(StandardCharsets.US_ASCII);
    assertThat(WriteProgress.parse(text, text.length)).isEqualTo(-1);
    byte[] cut = "wchar: ".getBytes(StandardCharsets.US_ASCII);
    assertThat(WriteProgress.parse(cut, cut.length)).isEqualTo(-1);
  }

  @Test
  void ofThisProcess_countsTheBytesOfAWriteCall() throws IOException {
    long before = WriteProgress.ofThisProcess();
    assumeTrue(before >= 0, "this system does not report a process's written bytes");
    try (FileChannel ch =
        FileChannel.open(
            dir.resolve("f"), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      ByteBuffer b = ByteBuffer.allocateDirect(1 << 20);
      while (b.hasRemaining()) {
        ch.write(b);
      }
    }
    assertThat(WriteProgress.ofThisProcess() - before).isGreaterThanOrEqualTo(1 << 20);
  }

  @Test
  void written_ofAProcessThatExited_isMinusOne() throws Exception {
    assumeTrue(
        WriteProgress.ofThisProcess() >= 0,
        "this system does not report a process's written bytes");
    Process p = new ProcessBuilder("cat").start(); // runs until its input closes
    try (WriteProgress w = WriteProgress.of(p.pid()).orElseThrow()) {
      assertThat(w.written()).isGreaterThanOrEqualTo(0);
      p.getOutputStream().close();
      assertThat(p.waitFor()).isZero();
      assertThat(w.written()).isEqualTo(-1); // reaped: its /proc entry is gone
    }
  }
}
