package io.kv4j.server;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Failed AUTH (and HELLO … AUTH) attempts: counted for {@code INFO} ({@code
 * acl_access_denied_auth}, Redis's name) and logged, at most one line per {@link #INTERVAL_NANOS},
 * the line saying how many failures it stands for, so a password-guessing client cannot flood the
 * log. The user name a client sent is printed with anything unprintable escaped (no forged lines).
 */
final class AuthFailures {
  static final long INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

  private final LongAdder count = new LongAdder();
  private final AtomicLong unlogged = new AtomicLong();
  private final AtomicLong lastLog;
  private final Consumer<String> log;
  private final LongSupplier nanoClock;

  AuthFailures() {
    this(StderrLog::print, System::nanoTime);
  }

  AuthFailures(Consumer<String> log, LongSupplier nanoClock) {
    this.log = log;
    this.nanoClock = nanoClock;
    this.lastLog = new AtomicLong(nanoClock.getAsLong() - INTERVAL_NANOS);
  }

  /** Failed attempts since the server started. */
  long count() {
    return count.sum();
  }

  /** One failed attempt by {@code remote} as {@code user}. */
  void failed(String user, String remote) {
    count.increment();
    unlogged.incrementAndGet();
    long now = nanoClock.getAsLong();
    long last = lastLog.get();
    if (now - last < INTERVAL_NANOS || !lastLog.compareAndSet(last, now)) {
      return;
    }
    long covered = unlogged.getAndSet(0); // this attempt and those not logged before it
    log.accept(
        "kv4j-server: AUTH failed for user '"
            + printable(user)
            + "' from "
            + printable(remote)
            + (covered > 1
                ? " (" + (covered - 1) + " more failed AUTH attempts since the last such line)"
                : ""));
  }

  /** At most 64 characters, anything outside printable ASCII as \xNN. */
  static String printable(String s) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < s.length() && sb.length() < 64; i++) {
      char c = s.charAt(i);
      if (c >= ' ' && c < 127 && c != '\\') {
        sb.append(c);
      } else {
        sb.append(String.format("\\x%02x", (int) c & 0xFF));
      }
    }
    return s.length() > 64 ? sb + "…" : sb.toString();
  }
}
