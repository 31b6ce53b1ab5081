package io.kv4j.spi;

import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An engine's log: a {@link System.Logger} whose calls never throw. An engine logs where it is
 * already failing — a disk that is full, a process out of file descriptors or memory — and the
 * logging framework may fail there too (the JDK's default formatter reads the time-zone database
 * the first time it runs, which needs a file descriptor). A log call that fails is dropped and
 * counted ({@link #dropped()}), so it can never replace the engine's own typed failure with an
 * {@code Error}, nor end a background thread whose error it was reporting. The log is a courtesy;
 * the store's state (failed until reopened, its health) is the signal.
 */
public final class EngineLog {
  private final System.Logger logger;
  private final AtomicLong dropped = new AtomicLong();

  /**
   * The log of the given name ({@link System#getLogger}).
   *
   * @param name the logger's name, by convention the engine's package ({@code io.kv4j.hashlog})
   */
  public EngineLog(String name) {
    this(System.getLogger(name));
  }

  /**
   * A log over the given logger.
   *
   * @param logger where messages go
   */
  public EngineLog(System.Logger logger) {
    this.logger = logger;
  }

  /**
   * Logs a message; never throws.
   *
   * @param level its level
   * @param message the message
   */
  public void log(Level level, String message) {
    try {
      logger.log(level, message);
    } catch (Throwable t) {
      dropped.incrementAndGet();
    }
  }

  /**
   * Logs a message and a throwable; never throws.
   *
   * @param level its level
   * @param message the message
   * @param thrown the throwable
   */
  public void log(Level level, String message, Throwable thrown) {
    try {
      logger.log(level, message, thrown);
    } catch (Throwable t) {
      dropped.incrementAndGet();
    }
  }

  /**
   * Logs a {@link java.text.MessageFormat} message; never throws.
   *
   * @param level its level
   * @param format the format
   * @param params its parameters
   */
  public void log(Level level, String format, Object... params) {
    try {
      logger.log(level, format, params);
    } catch (Throwable t) {
      dropped.incrementAndGet();
    }
  }

  /**
   * How many messages could not be logged because the logger threw.
   *
   * @return the count since this log was made
   */
  public long dropped() {
    return dropped.get();
  }
}
