package io.kv4j.hashlog;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;

/**
 * Releases memory mappings deterministically. Java 17 has no public unmap; {@code
 * sun.misc.Unsafe.invokeCleaner} (module jdk.unsupported) does it. The store calls this only after
 * every reader has left, since touching an unmapped buffer crashes the JVM. If the method is not
 * available the mapping is left to the garbage collector.
 */
final class Mappings {
  private static final Object UNSAFE;
  private static final Method INVOKE_CLEANER;

  static {
    Object u = null;
    Method m = null;
    try {
      Class<?> c = Class.forName("sun.misc.Unsafe");
      Field f = c.getDeclaredField("theUnsafe");
      f.setAccessible(true);
      u = f.get(null);
      m = c.getMethod("invokeCleaner", ByteBuffer.class);
    } catch (ReflectiveOperationException | RuntimeException e) {
      u = null;
      m = null;
    }
    UNSAFE = u;
    INVOKE_CLEANER = m;
  }

  private Mappings() {}

  static void unmap(ByteBuffer b) {
    if (b == null || !b.isDirect() || INVOKE_CLEANER == null) {
      return;
    }
    try {
      INVOKE_CLEANER.invoke(UNSAFE, b);
    } catch (ReflectiveOperationException | RuntimeException e) {
      // Left to the garbage collector.
    }
  }
}
