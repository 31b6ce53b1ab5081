package io.kv4j.tck;

import io.kv4j.Store;
import io.kv4j.StoreLockedException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * The child JVM of rule 10.11: tries to open a store from a config URI while the parent JVM holds
 * it open, and prints one line: {@code locked <message>} when the open throws {@link
 * StoreLockedException}, {@code opened <location>} when it succeeds (the store is closed again at
 * once), or {@code failed <exception>} for anything else.
 */
public final class LockProbe {
  private LockProbe() {}

  /**
   * Entry point.
   *
   * @param args the config URI
   */
  public static void main(String[] args) {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    try (Store s = GivenEngine.open(args[0])) {
      out.println("opened " + s.info().location());
    } catch (StoreLockedException e) {
      out.println("locked " + e.getMessage());
    } catch (Throwable e) {
      out.println("failed " + e);
    }
  }
}
