package io.kv4j.server;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A program the tests run to its end (redis-cli, redis-benchmark, openssl), its stderr merged into
 * its stdout as a terminal shows them, since the tests compare what the user would see. Its {@link
 * #toString()} gives the command, the exit code and the output, for assertion messages; a program
 * that does not exit in time is killed and fails the test with what it printed so far. (A program
 * that cannot be started at all throws the {@link IOException} of {@link ProcessBuilder#start()},
 * which names it.)
 *
 * @param command the program and its arguments
 * @param exit its exit code
 * @param output its stdout and stderr, merged
 */
record ToolRun(List<String> command, int exit, String output) {
  static ToolRun of(List<String> command, Duration timeout)
      throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    p.getOutputStream().close();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    Thread reader =
        new Thread(
            () -> {
              try (InputStream in = p.getInputStream()) {
                in.transferTo(out);
              } catch (IOException e) {
                // killed after the timeout: what was read is kept
              }
            },
            "kv4j-test-" + command.get(0));
    reader.setDaemon(true);
    reader.start();
    if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      p.destroyForcibly();
      p.waitFor();
      reader.join(TimeUnit.SECONDS.toMillis(10));
      throw new AssertionError(
          String.join(" ", command)
              + ": did not exit within "
              + timeout.toSeconds()
              + " s (killed); its output so far:\n"
              + out.toString(StandardCharsets.UTF_8));
    }
    reader.join();
    return new ToolRun(List.copyOf(command), p.exitValue(), out.toString(StandardCharsets.UTF_8));
  }

  @Override
  public String toString() {
    String signal = exit > 128 && exit < 160 ? " (killed by signal " + (exit - 128) + ")" : "";
    return String.join(" ", command) + ": exit " + exit + signal + "; output:\n" + output;
  }
}
