package io.kv4j.bench;

import io.kv4j.Stores;
import java.io.PrintStream;

/**
 * The comparison runner: {@code java -jar kv4j-bench.jar [options]}. Compares every engine found
 * through {@link Stores#providers()} (the kv4j engines on the classpath) and the bench's own peer
 * adapters ({@link Instruments}) on the selected scenarios, prints progress and tables, and writes
 * a report folder with markdown, CSV, JSON and PNG charts. {@code --help} lists the options.
 */
public final class Main {
  private Main() {}

  /**
   * Runs the comparison and exits with its status: 0 when every selected run produced numbers, 1
   * when a run failed (a wrong value read, an exception), 2 for a bad command line.
   *
   * @param args the command line
   */
  public static void main(String[] args) {
    int relaunched = Relaunch.ifNeeded(args);
    if (relaunched >= 0) {
      System.exit(relaunched);
    }
    System.exit(run(args, System.out));
  }

  /**
   * Runs the comparison.
   *
   * @param args the command line
   * @param out where progress, tables and messages go
   * @return the exit status, as for {@link #main(String[])}
   */
  public static int run(String[] args, PrintStream out) {
    return new Runner(out).run(args);
  }
}
