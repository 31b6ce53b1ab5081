package io.kv4j.server;

import io.netty.util.internal.logging.AbstractInternalLogger;
import io.netty.util.internal.logging.InternalLogger;
import io.netty.util.internal.logging.InternalLoggerFactory;

/**
 * Netty's log, written to standard error with no formatting machinery. Installed before any Netty
 * class logs, so that logging never loads a class, a time-zone file or a handler lazily: when the
 * process is out of file descriptors such a load fails, and the resulting {@code Error}, thrown
 * from a log call inside Netty's own error handling, killed the event loop that owned the listening
 * socket. Warnings and errors are printed (one line each, the cause's {@code toString()}); debug,
 * trace and info are off. Every print swallows whatever it throws.
 */
final class StderrLog extends AbstractInternalLogger {
  private static final long serialVersionUID = 1L;

  private static final InternalLoggerFactory FACTORY =
      new InternalLoggerFactory() {
        @Override
        protected InternalLogger newInstance(String name) {
          return new StderrLog(name);
        }
      };

  private StderrLog(String name) {
    super(name);
  }

  /** Makes Netty log through this class; call before the first Netty class is used. */
  static synchronized void install() {
    // Not getDefaultFactory(): asking would make Netty probe for SLF4J and Log4j first.
    if (!installed) {
      installed = true;
      InternalLoggerFactory.setDefaultFactory(FACTORY);
    }
  }

  private static boolean installed;

  /** Prints one line; never throws (this runs inside error handling). */
  static void print(String line) {
    try {
      System.err.println(line);
    } catch (Throwable ignored) {
      // Nothing sensible is left to do when standard error itself fails.
    }
  }

  private void log(String level, String format, Object[] args, Throwable t) {
    try {
      StringBuilder sb = new StringBuilder(96).append("kv4j-server ").append(level).append(' ');
      int a = 0;
      int from = 0;
      while (true) {
        int at = format == null ? -1 : format.indexOf("{}", from);
        if (at < 0 || args == null || a >= args.length) {
          sb.append(format == null ? "" : format.substring(from));
          break;
        }
        sb.append(format, from, at).append(args[a++]);
        from = at + 2;
      }
      if (t == null
          && args != null
          && args.length > a
          && args[args.length - 1] instanceof Throwable) {
        t = (Throwable) args[args.length - 1];
      }
      if (t != null) {
        sb.append(": ").append(t);
      }
      print(sb.toString());
    } catch (Throwable ignored) {
      // Logging must never throw into the caller.
    }
  }

  @Override
  public boolean isTraceEnabled() {
    return false;
  }

  @Override
  public void trace(String msg) {}

  @Override
  public void trace(String format, Object arg) {}

  @Override
  public void trace(String format, Object argA, Object argB) {}

  @Override
  public void trace(String format, Object... arguments) {}

  @Override
  public void trace(String msg, Throwable t) {}

  @Override
  public boolean isDebugEnabled() {
    return false;
  }

  @Override
  public void debug(String msg) {}

  @Override
  public void debug(String format, Object arg) {}

  @Override
  public void debug(String format, Object argA, Object argB) {}

  @Override
  public void debug(String format, Object... arguments) {}

  @Override
  public void debug(String msg, Throwable t) {}

  @Override
  public boolean isInfoEnabled() {
    return false;
  }

  @Override
  public void info(String msg) {}

  @Override
  public void info(String format, Object arg) {}

  @Override
  public void info(String format, Object argA, Object argB) {}

  @Override
  public void info(String format, Object... arguments) {}

  @Override
  public void info(String msg, Throwable t) {}

  @Override
  public boolean isWarnEnabled() {
    return true;
  }

  @Override
  public void warn(String msg) {
    log("WARN", msg, null, null);
  }

  @Override
  public void warn(String format, Object arg) {
    log("WARN", format, new Object[] {arg}, null);
  }

  @Override
  public void warn(String format, Object... arguments) {
    log("WARN", format, arguments, null);
  }

  @Override
  public void warn(String format, Object argA, Object argB) {
    log("WARN", format, new Object[] {argA, argB}, null);
  }

  @Override
  public void warn(String msg, Throwable t) {
    log("WARN", msg, null, t);
  }

  @Override
  public boolean isErrorEnabled() {
    return true;
  }

  @Override
  public void error(String msg) {
    log("ERROR", msg, null, null);
  }

  @Override
  public void error(String format, Object arg) {
    log("ERROR", format, new Object[] {arg}, null);
  }

  @Override
  public void error(String format, Object argA, Object argB) {
    log("ERROR", format, new Object[] {argA, argB}, null);
  }

  @Override
  public void error(String format, Object... arguments) {
    log("ERROR", format, arguments, null);
  }

  @Override
  public void error(String msg, Throwable t) {
    log("ERROR", msg, null, t);
  }
}
