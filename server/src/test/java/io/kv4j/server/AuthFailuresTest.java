package io.kv4j.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The failed-AUTH count and its rate-limited log line, on a clock the test moves. */
class AuthFailuresTest {
  private final List<String> lines = new ArrayList<>();
  private long now = 1_000_000_000L;
  private final AuthFailures failures = new AuthFailures(lines::add, () -> now);

  @Test
  void failed_countsEveryAttemptAndLogsOneLinePerInterval() {
    for (int i = 0; i < 100; i++) {
      failures.failed("admin", "/10.0.0.9:4242");
      now += TimeUnit.MILLISECONDS.toNanos(10);
    }
    assertThat(failures.count()).isEqualTo(100);
    assertThat(lines)
        .containsExactly("kv4j-server: AUTH failed for user 'admin' from /10.0.0.9:4242");
    now += AuthFailures.INTERVAL_NANOS;
    failures.failed("root", "/10.0.0.9:4243");
    assertThat(lines)
        .hasSize(2)
        .last()
        .isEqualTo(
            "kv4j-server: AUTH failed for user 'root' from /10.0.0.9:4243 (99 more failed AUTH"
                + " attempts since the last such line)");
    assertThat(failures.count()).isEqualTo(101);
  }

  @Test
  void failed_escapesWhatTheClientSent() {
    failures.failed("x\r\nkv4j-server: forged line", "/127.0.0.1:1");
    assertThat(lines).hasSize(1);
    assertThat(lines.get(0))
        .doesNotContain("\r")
        .doesNotContain("\n")
        .contains("'x\\x0d\\x0akv4j-server: forged line'");
  }
}
