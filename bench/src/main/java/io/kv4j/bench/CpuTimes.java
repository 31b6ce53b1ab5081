package io.kv4j.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Cumulative CPU time of the whole machine, in {@code /proc/stat} ticks, and what two readings say
 * about the interval between them: the CPU use of other processes, of the servers a run talks to,
 * and the hypervisor's steal ({@link Quietness} judges them).
 *
 * @param busy user, nice, system, irq and softirq time of all CPUs
 * @param steal time stolen by the hypervisor
 * @param total all of it, idle and iowait included
 * @param cpus the number of CPUs the counters cover
 */
record CpuTimes(long busy, long steal, long total, int cpus) {

  /**
   * Reads the counters now.
   *
   * @return the counters, or null without a readable {@code /proc/stat}
   */
  static CpuTimes read() {
    try {
      return parseStat(Files.readString(Path.of("/proc/stat"), StandardCharsets.US_ASCII));
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /**
   * Parses the first line of {@code /proc/stat} ({@code cpu user nice system idle iowait irq
   * softirq steal ...}) and counts the {@code cpuN} lines.
   *
   * @param text the file's content
   * @return the counters
   * @throws IllegalArgumentException if the text has no {@code cpu} line
   */
  static CpuTimes parseStat(String text) {
    long[] f = null;
    int cpus = 0;
    for (String line : text.split("\n")) {
      if (line.startsWith("cpu ")) {
        String[] parts = line.trim().split("\\s+");
        f = new long[10];
        for (int i = 1; i < parts.length && i <= f.length; i++) {
          f[i - 1] = Long.parseLong(parts[i]);
        }
      } else if (line.startsWith("cpu")) {
        cpus++;
      }
    }
    if (f == null) {
      throw new IllegalArgumentException("no 'cpu' line in /proc/stat");
    }
    // user nice system idle iowait irq softirq steal (guest time is already in user)
    long busy = f[0] + f[1] + f[2] + f[5] + f[6];
    long total = busy + f[3] + f[4] + f[7];
    return new CpuTimes(busy, f[7], total, cpus);
  }

  /**
   * The CPU use of other processes over an interval, in cores: the machine's busy share times its
   * CPUs, minus this process's CPU time over the wall time, minus the servers' the run talked to.
   *
   * @param a the counters at the start
   * @param b the counters at the end
   * @param ownCpuNs this process's CPU time in the interval
   * @param wallNs the interval's wall time
   * @param serverTicks the servers' CPU time in the interval, in {@code /proc/stat} ticks (0
   *     without server engines)
   * @return cores used by others (at least 0), or NaN for an empty interval
   */
  static double othersCores(CpuTimes a, CpuTimes b, long ownCpuNs, long wallNs, long serverTicks) {
    long total = b.total() - a.total();
    if (total <= 0 || wallNs <= 0) {
      return Double.NaN;
    }
    double machine = (double) (b.busy() - a.busy()) / total * b.cpus();
    return Math.max(0, machine - (double) ownCpuNs / wallNs - serverCores(a, b, serverTicks));
  }

  /**
   * CPU time in {@code /proc/stat} ticks over an interval, in cores: the same unit as the machine's
   * counters, so no clock-tick rate is needed (all CPUs' ticks / CPUs = the wall time).
   *
   * @param a the counters at the start
   * @param b the counters at the end
   * @param ticks the CPU time, at least 0
   * @return cores, or NaN for an empty interval
   */
  static double serverCores(CpuTimes a, CpuTimes b, long ticks) {
    long total = b.total() - a.total();
    return total <= 0 ? Double.NaN : (double) Math.max(0, ticks) / total * b.cpus();
  }

  /**
   * Stolen time / all time over an interval.
   *
   * @param a the counters at the start
   * @param b the counters at the end
   * @return the share, or NaN for an empty interval
   */
  static double stealShare(CpuTimes a, CpuTimes b) {
    long total = b.total() - a.total();
    return total <= 0 ? Double.NaN : (double) (b.steal() - a.steal()) / total;
  }
}
