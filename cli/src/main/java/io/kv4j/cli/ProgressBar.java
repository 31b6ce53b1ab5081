package io.kv4j.cli;

import io.kv4j.StoreCopy;
import java.io.PrintWriter;
import java.util.Locale;

/**
 * Draws a copy's progress on standard error: redrawn in place on a terminal, one line per interval
 * otherwise (logs, pipes).
 */
final class ProgressBar implements StoreCopy.Listener {
  private static final int WIDTH = 24;

  private final PrintWriter err;
  private final boolean terminal;
  private final long intervalNanos;
  private long lastDraw = Long.MIN_VALUE;
  private int lastLength;

  ProgressBar(PrintWriter err, boolean terminal, long intervalMillis) {
    this.err = err;
    this.terminal = terminal;
    this.intervalNanos = intervalMillis * 1_000_000L;
  }

  @Override
  public void progress(StoreCopy.Progress p) {
    long now = System.nanoTime();
    if (!p.done() && lastDraw != Long.MIN_VALUE && now - lastDraw < intervalNanos) {
      return;
    }
    lastDraw = now;
    String line = line(p);
    if (terminal) {
      String pad = " ".repeat(Math.max(0, lastLength - line.length()));
      err.print("\r" + line + pad + (p.done() ? "\n" : ""));
      lastLength = line.length();
    } else {
      err.println(line);
    }
    err.flush();
  }

  static String line(StoreCopy.Progress p) {
    double f = p.fraction();
    StringBuilder sb = new StringBuilder("[");
    int filled = f < 0 ? 0 : (int) Math.round(f * WIDTH);
    sb.append("#".repeat(filled)).append("-".repeat(WIDTH - filled)).append("] ");
    sb.append(f < 0 ? "   ?  " : String.format(Locale.ROOT, "%5.1f%%", f * 100));
    sb.append("  ").append(Format.count(p.entries()));
    if (p.expectedEntries() >= 0) {
      sb.append('/').append(Format.count(p.expectedEntries()));
    }
    sb.append(" entries  ").append(Format.bytes(p.bytes()));
    sb.append("  ")
        .append(String.format(Locale.ROOT, "%,.0f", p.entriesPerSecond()))
        .append(" entries/s  ")
        .append(Format.bytes(p.bytesPerSecond()))
        .append("/s  ");
    long eta = p.etaNanos();
    if (p.done()) {
      sb.append("done in ").append(Format.clock(p.elapsedNanos()));
    } else {
      sb.append("ETA ").append(eta < 0 ? "?" : Format.clock(eta));
    }
    return sb.toString();
  }
}
