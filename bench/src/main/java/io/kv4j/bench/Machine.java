package io.kv4j.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/** What a report says about where and how it was made: the machine, the JVM, the command. */
final class Machine {
  private Machine() {}

  /**
   * The 1-minute load average.
   *
   * @return its text from {@code /proc/loadavg}, or {@code unknown}
   */
  static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
    } catch (IOException | RuntimeException e) {
      return "unknown";
    }
  }

  /**
   * The type of the file system a directory is on.
   *
   * @param dir the directory
   * @return such as {@code ext4} or {@code tmpfs}, or {@code unknown}
   */
  static String fileSystemType(Path dir) {
    try {
      return Files.getFileStore(dir).type();
    } catch (IOException e) {
      return "unknown";
    }
  }

  /**
   * The command that reproduces a report: the runner's arguments, and the {@code -Dkv4j.} settings
   * this JVM was started with (the TCK depth, for one), which change what is measured.
   *
   * @param args the runner's arguments
   * @return the command, as a reader would type it from the repository root
   */
  static String command(List<String> args) {
    StringBuilder b = new StringBuilder("java");
    for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (a.startsWith("-Dkv4j.")) {
        b.append(' ').append(a);
      }
    }
    b.append(" -jar bench/target/kv4j-bench.jar");
    for (String a : args) {
      b.append(' ').append(a);
    }
    return b.toString();
  }

  /**
   * One line on the machine and the JVM: cores, CPU model, OS, Java, max heap, JVM flags.
   *
   * @return the line
   */
  static String environment() {
    Runtime rt = Runtime.getRuntime();
    String cpu = "unknown CPU";
    try {
      for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"), StandardCharsets.UTF_8)) {
        if (line.startsWith("model name")) {
          cpu = line.substring(line.indexOf(':') + 1).trim();
          break;
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux: keep the default
    }
    return String.format(
        Locale.ROOT,
        "Machine: %d cores (%s), %s %s; Java %s (%s); max heap %d MiB; JVM flags: %s",
        rt.availableProcessors(),
        cpu,
        System.getProperty("os.name"),
        System.getProperty("os.version"),
        System.getProperty("java.version"),
        System.getProperty("java.vm.name"),
        rt.maxMemory() >> 20,
        String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments()));
  }
}
