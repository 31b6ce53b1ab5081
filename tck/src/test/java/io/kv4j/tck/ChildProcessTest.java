package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A failing child says why: could not start, exited, threw, or hung; with its streams' tails. */
final class ChildProcessTest {
  private static final Duration WAIT = Duration.ofMinutes(2);

  /** Prints a line to each stream, then exits with the code given as its argument. */
  static final class Exits {
    public static void main(String[] args) {
      System.out.println("acked 0");
      System.err.println("cannot open the store: no such thing");
      System.exit(Integer.parseInt(args[0]));
    }
  }

  /** Throws from main. */
  static final class Throws {
    public static void main(String[] args) {
      System.out.println("before the throw");
      throw new IllegalStateException("the child's own failure");
    }
  }

  /** Echoes lines, then sleeps until killed. */
  static final class Hangs {
    public static void main(String[] args) throws InterruptedException {
      System.out.println("one");
      System.out.println("two");
      System.out.flush();
      new java.util.concurrent.CountDownLatch(1).await(); // until killed
    }
  }

  @Test
  void assertSucceeded_childExitsOne_failsWithItsExitCodeAndStreams() throws Exception {
    try (ChildProcess c = ChildProcess.java(Exits.class, "1").start()) {
      Throwable t = catchThrowable(() -> c.assertSucceeded(WAIT));
      assertThat(t)
          .isInstanceOf(AssertionError.class)
          .hasMessageContaining("FAILED (exit 1, after its main started)")
          .hasMessageContaining("cannot open the store: no such thing")
          .hasMessageContaining("acked 0")
          .hasMessageNotContaining(ChildProcess.STARTED);
      assertThat(c.started()).isTrue();
      assertThat(c.stderr()).isEqualTo("cannot open the store: no such thing");
    }
  }

  @Test
  void assertSucceeded_childExitsZero_passes() throws Exception {
    try (ChildProcess c = ChildProcess.java(Exits.class, "0").start()) {
      c.assertSucceeded(WAIT);
      assertThat(c.stdoutLines()).containsExactly("acked 0");
      assertThat(c.describe()).contains("exited normally (exit 0");
    }
  }

  @Test
  void describe_jvmCannotStart_saysSoApartFromAFailedChild() throws Exception {
    try (ChildProcess c = ChildProcess.java(Exits.class, "0").jvmOptions("-Xmx1k").start()) {
      Throwable t = catchThrowable(() -> c.assertSucceeded(WAIT));
      assertThat(t)
          .hasMessageContaining("COULD NOT START")
          .hasMessageContaining("before the child's main ran")
          .hasMessageContaining("heap");
      assertThat(c.started()).isFalse();
    }
  }

  @Test
  void describe_mainThrows_namesTheThrowableAndItsStackTrace() throws Exception {
    try (ChildProcess c = ChildProcess.java(Throws.class).start()) {
      assertThat(c.await(WAIT)).isEqualTo(ChildProcess.EXIT_THREW);
      assertThat(c.describe())
          .contains("its main threw")
          .contains("IllegalStateException: the child's own failure")
          .contains("before the throw");
    }
  }

  @Test
  void readLine_givesLinesAsTheyCome_andAwaitKillsAChildThatDoesNotExit() throws Exception {
    try (ChildProcess c = ChildProcess.java(Hangs.class).start()) {
      assertThat(c.readLine(WAIT)).isEqualTo("one");
      assertThat(c.readLine(WAIT)).isEqualTo("two");
      Throwable t = catchThrowable(() -> c.await(Duration.ofMillis(200)));
      assertThat(t).hasMessageContaining("did not exit within 0 s").hasMessageContaining("two");
      assertThat(c.process().isAlive()).as("killed after the timeout").isFalse();
      assertThat(c.readLine(WAIT)).as("stdout ended").isNull();
    }
  }

  /** Prints numbered lines as fast as it can until killed. */
  static final class Floods {
    public static void main(String[] args) {
      for (long i = 0; ; i++) {
        System.out.println("line " + i);
      }
    }
  }

  /**
   * Killing a child must not close this side's pipes before the pumps read them (as {@code
   * Process.destroyForcibly} does). Whether unread output is in the pipe at the kill is a race, so
   * several children are killed mid-flood.
   */
  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(ints = {1, 2, 3, 4, 5, 6, 7, 8})
  void kill_childMidOutput_keepsEveryLineItWroteBeforeItDied(int child) throws Exception {
    try (ChildProcess c = ChildProcess.java(Floods.class).start()) {
      assertThat(c.readLine(WAIT)).isEqualTo("line 0");
      c.kill();
      List<String> rest = new java.util.ArrayList<>();
      for (String line = c.readLine(WAIT); line != null; line = c.readLine(WAIT)) {
        rest.add(line);
      }
      for (int i = 0; i < rest.size(); i++) {
        String expected = "line " + (i + 1);
        if (i < rest.size() - 1) {
          assertThat(rest.get(i)).as("lines in order, none lost").isEqualTo(expected);
        } else { // the kill may cut the last line short
          assertThat(expected).as("the last line, maybe cut short").startsWith(rest.get(i));
        }
      }
      assertThat(c.stdout()).as("the pipe was read to its end").doesNotContain("failed");
      assertThat(c.describe()).contains("killed by the test");
    }
  }

  @Test
  void command_anyProgram_keepsItsExitAndOutput() throws Exception {
    try (ChildProcess c =
        ChildProcess.command(List.of("sh", "-c", "echo out; echo err >&2; exit 3")).start()) {
      assertThat(c.await(WAIT)).isEqualTo(3);
      assertThat(c.describe()).contains("FAILED (exit 3)").contains("err").contains("out");
    }
  }
}
