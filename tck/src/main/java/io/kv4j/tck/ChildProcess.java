package io.kv4j.tck;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A child process run by a test, which can always say what happened to it: its stdout and stderr
 * are read as they come and kept, and {@link #describe()} gives the command, how it ended (could
 * not start, exited with a code, killed by a signal, did not end in time) and the last lines of
 * both streams, for the assertion message of a test whose child failed.
 *
 * <p>A Java child ({@link #java}) runs through {@link ChildMain}, which prints {@link #STARTED} to
 * stderr before it calls the child's {@code main} and reports a {@code Throwable} it throws; so
 * "the JVM could not start or load the class" (no marker) is told apart from "the child ran and
 * failed what it tests". {@link #stderr()} leaves the marker out.
 *
 * <p>Not thread-safe: one test thread drives it. {@link #close()} kills a child still running.
 */
public final class ChildProcess implements AutoCloseable {
  /** The line {@link ChildMain} prints to stderr once the child's JVM runs its {@code main}. */
  public static final String STARTED = "kv4j-child: main started";

  /**
   * The line {@link ChildMain} prints to stderr, before the stack trace, when {@code main} threw.
   */
  public static final String THREW = "kv4j-child: main threw";

  /** The exit code of a Java child whose {@code main} threw (BSD's EX_SOFTWARE). */
  public static final int EXIT_THREW = 70;

  private static final int TAIL_LINES = 30;
  private static final Object END = new Object();

  private final List<String> command;
  private final boolean javaChild;
  private final Process process;
  private final long startNanos = System.nanoTime();
  private final List<String> out = new ArrayList<>();
  private final List<String> err = new ArrayList<>();
  private final BlockingQueue<Object> fresh = new LinkedBlockingQueue<>();
  private final Thread outPump;
  private final Thread errPump;
  private volatile boolean killedByTest;
  private volatile String timedOut;
  private boolean outEnded;

  private ChildProcess(List<String> command, boolean javaChild, ProcessBuilder pb)
      throws IOException {
    this.command = List.copyOf(command);
    this.javaChild = javaChild;
    this.process = pb.start();
    this.outPump = pump(process.getInputStream(), out, true, "stdout");
    this.errPump = pump(process.getErrorStream(), err, false, "stderr");
  }

  /**
   * A child JVM running {@code main} (a class with {@code static void main(String[])}) with this
   * JVM's {@code java} and class path.
   *
   * @param main the child's main class
   * @param args its arguments
   * @return a builder for more options
   */
  public static Builder java(Class<?> main, String... args) {
    return new Builder(main.getName(), List.of(args));
  }

  /**
   * A child running {@code command} as it is.
   *
   * @param command the program and its arguments
   * @return a builder for more options
   */
  public static Builder command(List<String> command) {
    return new Builder(command);
  }

  /** Options for a child, then {@link #start()}. */
  public static final class Builder {
    private final String mainClass;
    private final List<String> args;
    private final List<String> command;
    private final List<String> jvmOptions = new ArrayList<>();
    private final List<String> prefix = new ArrayList<>();
    private final Map<String, String> environment = new LinkedHashMap<>();
    private String classPath = System.getProperty("java.class.path");
    private String javaHome = System.getProperty("java.home");
    private Path directory;

    private Builder(String mainClass, List<String> args) {
      this.mainClass = mainClass;
      this.args = List.copyOf(args);
      this.command = null;
    }

    private Builder(List<String> command) {
      if (command.isEmpty()) {
        throw new IllegalArgumentException("empty command");
      }
      this.mainClass = null;
      this.args = List.of();
      this.command = List.copyOf(command);
    }

    /**
     * JVM options, before the class name ({@code -Xmx256m}, {@code -Dkey=value}).
     *
     * @param options the options
     * @return this builder
     */
    public Builder jvmOptions(String... options) {
      requireJava();
      jvmOptions.addAll(List.of(options));
      return this;
    }

    /**
     * JVM options, before the class name.
     *
     * @param options the options
     * @return this builder
     */
    public Builder jvmOptions(List<String> options) {
      requireJava();
      jvmOptions.addAll(options);
      return this;
    }

    /**
     * The child JVM's class path (default: this JVM's).
     *
     * @param classPath the class path
     * @return this builder
     */
    public Builder classPath(String classPath) {
      requireJava();
      this.classPath = Objects.requireNonNull(classPath, "classPath");
      return this;
    }

    /**
     * The JDK that runs the child (default: this JVM's).
     *
     * @param javaHome the JDK's home directory
     * @return this builder
     */
    public Builder javaHome(Path javaHome) {
      requireJava();
      this.javaHome = javaHome.toString();
      return this;
    }

    /**
     * A program the command runs under, such as a tracer ({@code strace -f}).
     *
     * @param prefix the program and its arguments
     * @return this builder
     */
    public Builder prefix(List<String> prefix) {
      this.prefix.addAll(prefix);
      return this;
    }

    /**
     * The child's working directory (default: this process's).
     *
     * @param directory the directory
     * @return this builder
     */
    public Builder directory(Path directory) {
      this.directory = directory;
      return this;
    }

    /**
     * One environment variable of the child.
     *
     * @param name its name
     * @param value its value
     * @return this builder
     */
    public Builder environment(String name, String value) {
      environment.put(name, value);
      return this;
    }

    /**
     * Starts the child.
     *
     * @return the running child
     * @throws IOException if the program cannot be started
     */
    public ChildProcess start() throws IOException {
      List<String> cmd = new ArrayList<>(prefix);
      if (command != null) {
        cmd.addAll(command);
      } else {
        cmd.add(Path.of(javaHome, "bin", "java").toString());
        cmd.addAll(jvmOptions);
        cmd.add("-cp");
        cmd.add(classPath);
        cmd.add(ChildMain.class.getName());
        cmd.add(mainClass);
        cmd.addAll(args);
      }
      ProcessBuilder pb = new ProcessBuilder(cmd);
      if (directory != null) {
        pb.directory(directory.toFile());
      }
      pb.environment().putAll(environment);
      return new ChildProcess(cmd, command == null, pb);
    }

    private void requireJava() {
      if (command != null) {
        throw new IllegalStateException("JVM options are for a child made by ChildProcess.java");
      }
    }
  }

  private Thread pump(InputStream in, List<String> into, boolean queue, String name) {
    Thread t =
        new Thread(
            () -> {
              try (BufferedReader r =
                  new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                for (String line = r.readLine(); line != null; line = r.readLine()) {
                  synchronized (into) {
                    into.add(line);
                  }
                  if (queue) {
                    fresh.add(line);
                  }
                }
              } catch (IOException e) {
                synchronized (into) {
                  into.add("(reading the child's " + name + " failed: " + e + ")");
                }
              } finally {
                if (queue) {
                  fresh.add(END);
                }
              }
            },
            "kv4j-child-" + name + "-" + process.pid());
    t.setDaemon(true);
    t.start();
    return t;
  }

  /**
   * The child's process.
   *
   * @return the process
   */
  public Process process() {
    return process;
  }

  /**
   * The child's process id.
   *
   * @return the pid
   */
  public long pid() {
    return process.pid();
  }

  /**
   * The child's next line of stdout, waiting for it; null once stdout ended (the child exited or
   * closed it).
   *
   * @param timeout how long to wait for the line
   * @return the line, or null at the end of stdout
   * @throws InterruptedException if interrupted while waiting
   * @throws AssertionError naming the child's state if no line came within {@code timeout}
   */
  public String readLine(Duration timeout) throws InterruptedException {
    if (outEnded) {
      return null;
    }
    Object next = fresh.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
    if (next == null) {
      throw new AssertionError(
          "no line of stdout within " + timeout.toSeconds() + " s from " + describe());
    }
    if (next == END) {
      outEnded = true;
      return null;
    }
    return (String) next;
  }

  /**
   * Waits for the child to exit and for both its streams to be read; kills it and throws if it does
   * not exit within {@code timeout}.
   *
   * @param timeout how long to wait
   * @return the exit code
   * @throws InterruptedException if interrupted while waiting
   * @throws AssertionError naming the child's state if it did not exit in time
   */
  public int await(Duration timeout) throws InterruptedException {
    if (!process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
      timedOut = "did not exit within " + timeout.toSeconds() + " s";
      String state = describe();
      kill();
      throw new AssertionError(state);
    }
    outPump.join(TimeUnit.SECONDS.toMillis(10));
    errPump.join(TimeUnit.SECONDS.toMillis(10));
    return process.exitValue();
  }

  /**
   * Waits as {@link #await} and asserts that the child exited with code 0.
   *
   * @param timeout how long to wait
   * @throws InterruptedException if interrupted while waiting
   * @throws AssertionError with {@link #describe()} if it did not
   */
  public void assertSucceeded(Duration timeout) throws InterruptedException {
    if (await(timeout) != 0) {
      throw new AssertionError(describe());
    }
  }

  /**
   * Kills the child (SIGKILL) and waits until it is gone.
   *
   * @throws InterruptedException if interrupted while waiting
   */
  public void kill() throws InterruptedException {
    killedByTest = true;
    // Through the handle: Process.destroyForcibly also closes this side's pipes, which would lose
    // what the child wrote before it died and the pumps have not read yet.
    process.toHandle().destroyForcibly();
    process.waitFor();
  }

  /**
   * Whether the Java child's {@code main} began (false for a child that is not a Java one).
   *
   * @return whether it began
   */
  public boolean started() {
    synchronized (err) {
      return javaChild && err.contains(STARTED);
    }
  }

  /**
   * Every line of stdout read so far.
   *
   * @return the lines
   */
  public List<String> stdoutLines() {
    synchronized (out) {
      return List.copyOf(out);
    }
  }

  /**
   * The stdout read so far, lines joined by newlines.
   *
   * @return the text
   */
  public String stdout() {
    return String.join("\n", stdoutLines());
  }

  /**
   * The stderr read so far, lines joined by newlines, without {@link ChildMain}'s marker.
   *
   * @return the text
   */
  public String stderr() {
    List<String> lines;
    synchronized (err) {
      lines = new ArrayList<>(err);
    }
    lines.remove(STARTED);
    return String.join("\n", lines);
  }

  /**
   * The child for an assertion message: its command, how it ended (or that it runs), and the last
   * lines of its stderr and stdout.
   *
   * @return the description
   */
  public String describe() {
    StringBuilder b = new StringBuilder("child process ").append(pid());
    b.append(" (").append(shortCommand()).append("): ").append(state());
    b.append(String.format(" after %.1f s", (System.nanoTime() - startNanos) / 1e9));
    tail(b, "stderr", stderr());
    tail(b, "stdout", stdout());
    return b.toString();
  }

  private String state() {
    if (timedOut != null) {
      return timedOut + (started() || !javaChild ? "" : " and its main never started");
    }
    if (process.isAlive()) {
      return "still running";
    }
    int code = process.exitValue();
    if (killedByTest) {
      return "killed by the test (exit " + code + ")";
    }
    if (javaChild && !started()) {
      return "COULD NOT START: the JVM exited with code "
          + code
          + " before the child's main ran (a JVM that could not be created or a class that could"
          + " not be loaded; see stderr)";
    }
    String signal = code > 128 && code < 160 ? ", killed by signal " + (code - 128) : "";
    if (javaChild && code == EXIT_THREW) {
      synchronized (err) {
        if (err.contains(THREW)) {
          return "its main threw (exit " + code + "; the stack trace is in stderr)";
        }
      }
    }
    return (code == 0 ? "exited normally (exit 0" : "FAILED (exit " + code + signal)
        + (javaChild ? ", after its main started)" : ")");
  }

  private String shortCommand() {
    String joined = String.join(" ", command);
    int cp = command.indexOf("-cp");
    if (cp >= 0 && cp + 1 < command.size()) {
      joined = joined.replace(command.get(cp + 1), "<class path>");
    }
    return joined.length() > 600 ? joined.substring(0, 600) + " ..." : joined;
  }

  private static void tail(StringBuilder b, String name, String text) {
    if (text.isEmpty()) {
      b.append("\n--- ").append(name).append(": (empty)");
      return;
    }
    String[] lines = text.split("\n", -1);
    int from = Math.max(0, lines.length - TAIL_LINES);
    b.append("\n--- ").append(name);
    b.append(from == 0 ? ":" : " (last " + TAIL_LINES + " of " + lines.length + " lines):");
    for (int i = from; i < lines.length; i++) {
      b.append("\n  ").append(lines[i]);
    }
  }

  @Override
  public void close() {
    if (process.isAlive()) {
      killedByTest = true;
      process.toHandle().destroyForcibly();
      try {
        process.waitFor();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public String toString() {
    return describe();
  }
}
