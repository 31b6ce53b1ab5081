package io.kv4j.tck;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * Runs one TCK class in a JVM of its own, as surefire would in a third party's project: {@code java
 * -cp <their classes>:<kit> io.kv4j.tck.SkeletonRun <class>}. Prints the summary and the failures;
 * exits 0 when tests ran and none failed.
 */
final class SkeletonRun {
  private SkeletonRun() {}

  public static void main(String[] args) throws Exception {
    Class<?> tck = Class.forName(args[0]);
    Launcher launcher = LauncherFactory.create();
    SummaryGeneratingListener summary = new SummaryGeneratingListener();
    launcher.execute(
        LauncherDiscoveryRequestBuilder.request().selectors(selectClass(tck)).build(), summary);
    TestExecutionSummary s = summary.getSummary();
    PrintWriter out = new PrintWriter(System.out, true, StandardCharsets.UTF_8);
    s.printTo(out);
    s.printFailuresTo(out, 5);
    out.flush();
    System.exit(s.getTestsFoundCount() > 0 && s.getTotalFailureCount() == 0 ? 0 : 1);
  }
}
