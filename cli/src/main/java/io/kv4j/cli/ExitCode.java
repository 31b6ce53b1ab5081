package io.kv4j.cli;

/** The exit codes of {@code kv4j}, documented in the README and in {@code kv4j --help}. */
final class ExitCode {
  /** Success. */
  static final int OK = 0;

  /** Bad command line, bad URI, unknown engine or option, or an operation the engine lacks. */
  static final int USAGE = 1;

  /** The key or the store does not exist. */
  static final int NOT_FOUND = 2;

  /** The store holds corrupt data. */
  static final int CORRUPT = 3;

  /** The store is open in another process (or this one). */
  static final int LOCKED = 4;

  /** An I/O or other storage error. */
  static final int IO = 5;

  /** A check failed: copy verification mismatch, TCK rules failed, a benchmark run failed. */
  static final int CHECK_FAILED = 6;

  /**
   * The directory holds another engine's store (its identity file, or files that engine
   * recognises): most likely intact, and opened with that engine; not the corruption of {@link
   * #CORRUPT}.
   */
  static final int WRONG_ENGINE = 7;

  /** An unexpected error: a bug in kv4j or an engine. */
  static final int INTERNAL = 10;

  /** The text shown at the end of {@code kv4j --help}. */
  static final String HELP =
      "%nExit codes:%n"
          + "  0  ok%n"
          + "  1  usage: bad option, URI, engine or argument; operation not supported%n"
          + "  2  not found: no such key (get) or no store at the path%n"
          + "  3  corrupt data found%n"
          + "  4  store locked by another process%n"
          + "  5  I/O or storage error%n"
          + "  6  check failed: copy verification, TCK rules, benchmark runs%n"
          + "  7  another engine's store: open it with the engine the message names%n"
          + "  10 internal error (a bug; set KV4J_DEBUG=1 for the stack trace)%n"
          + "  130/143 Ctrl-C / SIGTERM (copy stops between batches: rerun with --resume)%n";

  private ExitCode() {}
}
