package io.kv4j.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.ResourceBundle;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

final class EngineLogTest {
  /** A logger that records messages, or throws what it is given instead. */
  private static final class Recording implements System.Logger {
    final List<String> messages = new ArrayList<>();
    Supplier<Throwable> failure;

    @Override
    public String getName() {
      return "test";
    }

    @Override
    public boolean isLoggable(Level level) {
      return true;
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
      record(msg + (thrown == null ? "" : " / " + thrown.getMessage()));
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String format, Object... params) {
      record(java.text.MessageFormat.format(format, params));
    }

    private void record(String m) {
      if (failure != null) {
        Throwable t = failure.get();
        if (t instanceof Error) {
          throw (Error) t;
        }
        throw (RuntimeException) t;
      }
      messages.add(m);
    }
  }

  @Test
  void log_loggerWorks_passesEveryFormOn() {
    Recording r = new Recording();
    EngineLog log = new EngineLog(r);
    log.log(Level.WARNING, "plain");
    log.log(Level.ERROR, "with cause", new IllegalStateException("why"));
    log.log(Level.INFO, "format {0} {1}", "a", 2);
    assertThat(r.messages).containsExactly("plain", "with cause / why", "format a 2");
    assertThat(log.dropped()).isZero();
  }

  @Test
  void log_loggerThrowsAnError_neverThrows_andCountsTheDroppedMessages() {
    Recording r = new Recording();
    // What the JDK's default formatter throws when the process is out of file descriptors.
    r.failure =
        () -> new Error(new java.io.FileNotFoundException("tzdb.dat (Too many open files)"));
    EngineLog log = new EngineLog(r);
    log.log(Level.ERROR, "the store failed", new RuntimeException("cause"));
    log.log(Level.WARNING, "plain");
    r.failure = () -> new IllegalStateException("logger closed");
    log.log(Level.INFO, "format {0}", 1);
    assertThat(log.dropped()).isEqualTo(3);
    r.failure = null;
    log.log(Level.INFO, "later");
    assertThat(r.messages).containsExactly("later");
  }
}
