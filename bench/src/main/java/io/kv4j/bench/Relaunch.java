package io.kv4j.bench;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

/**
 * Java 24 and later print a warning when a library calls {@code sun.misc.Unsafe}'s memory methods
 * (JEP 498) unless the JVM was started with {@code --sun-misc-unsafe-memory-access=allow}; the
 * bench's peer stores (Chronicle Map, MapDB) and {@code lmdb-raw} do, and a jar manifest cannot
 * carry that flag. So on those JDKs {@code java -jar kv4j-bench.jar} starts itself once more in a
 * child JVM with the flag (and the manifest's {@code Add-Opens}, {@code Add-Exports} and {@code
 * Enable-Native-Access}, which a {@code -cp} launch does not read), the same JVM options, class
 * path and arguments, inherited standard streams, and exits with the child's status. Java 17 to 23
 * reject the flag and need none of this.
 */
final class Relaunch {
  /** Set in the child, so it never starts another. */
  static final String MARK = "kv4j.bench.relaunched";

  static final String UNSAFE_FLAG = "--sun-misc-unsafe-memory-access=allow";

  /** What the runner jar's manifest grants (bench/pom.xml), as command-line flags. */
  static final List<String> MANIFEST_FLAGS =
      List.of(
          "--add-opens=java.base/java.nio=ALL-UNNAMED",
          "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
          "--add-opens=java.base/java.lang=ALL-UNNAMED",
          "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
          "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
          "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
          "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
          "--enable-native-access=ALL-UNNAMED");

  private Relaunch() {}

  /**
   * The child's command line, or an empty list when this JVM needs no relaunch.
   *
   * @param javaFeature the running JDK's feature release
   * @param jvmArgs this JVM's input arguments
   * @param args the bench's arguments
   */
  static List<String> command(int javaFeature, List<String> jvmArgs, String[] args) {
    if (javaFeature < 24 || Boolean.getBoolean(MARK)) {
      return List.of();
    }
    for (String a : jvmArgs) {
      if (a.startsWith("--sun-misc-unsafe-memory-access")) {
        return List.of(); // the user chose a mode: keep it
      }
    }
    List<String> cmd = new ArrayList<>();
    cmd.add(ProcessHandle.current().info().command().orElse("java"));
    cmd.addAll(jvmArgs);
    cmd.add(UNSAFE_FLAG);
    cmd.addAll(MANIFEST_FLAGS);
    cmd.add("-D" + MARK + "=true");
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(Main.class.getName());
    cmd.addAll(List.of(args));
    return cmd;
  }

  /**
   * Runs the bench in a child JVM when this one lacks the flag on Java 24+.
   *
   * @param args the bench's arguments
   * @return the child's exit status, or -1 when no relaunch was needed
   */
  static int ifNeeded(String[] args) {
    List<String> cmd =
        command(
            Runtime.version().feature(),
            ManagementFactory.getRuntimeMXBean().getInputArguments(),
            args);
    if (cmd.isEmpty()) {
      return -1;
    }
    try {
      Process p = new ProcessBuilder(cmd).inheritIO().start();
      return p.waitFor();
    } catch (java.io.IOException e) {
      System.err.println("kv4j-bench: cannot start " + cmd.get(0) + ": " + e.getMessage());
      return 2;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 130;
    }
  }
}
