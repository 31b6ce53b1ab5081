package io.kv4j.tck;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Arrays;

/**
 * The entry point of a Java child started by {@link ChildProcess#java}: prints {@link
 * ChildProcess#STARTED} to stderr, then runs the class named by its first argument with the rest;
 * if that {@code main} throws, prints {@link ChildProcess#THREW} and the stack trace to stderr and
 * exits with {@link ChildProcess#EXIT_THREW}. Everything it needs is loaded before the child's
 * {@code main} runs, so a child that starves the process of descriptors or memory still gets its
 * failure reported.
 */
public final class ChildMain {
  private ChildMain() {}

  /**
   * Runs the child.
   *
   * @param args {@code <main class> [args...]}
   * @throws Exception if the class cannot be found or its {@code main} cannot be called
   */
  public static void main(String[] args) throws Exception {
    if (args.length == 0) {
      throw new IllegalArgumentException("usage: ChildMain <main class> [args...]");
    }
    Method main = Class.forName(args[0]).getDeclaredMethod("main", String[].class);
    main.setAccessible(true);
    String[] rest = Arrays.copyOfRange(args, 1, args.length);
    System.err.println(ChildProcess.STARTED);
    System.err.flush();
    try {
      main.invoke(null, (Object) rest);
    } catch (InvocationTargetException e) {
      Throwable t = e.getCause();
      System.out.flush();
      System.err.println(ChildProcess.THREW);
      t.printStackTrace();
      System.err.flush();
      Runtime.getRuntime().halt(ChildProcess.EXIT_THREW);
    }
  }
}
