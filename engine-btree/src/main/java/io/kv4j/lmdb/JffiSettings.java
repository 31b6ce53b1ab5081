package io.kv4j.lmdb;

/**
 * Chooses how jffi (the native-call layer under lmdbjava's jnr-ffi) reads and writes native memory,
 * before jffi loads.
 *
 * <p>jffi's {@code com.kenai.jffi.MemoryIO} uses {@code sun.misc.Unsafe} when it can. Its memory
 * methods are terminally deprecated (JEP 471): from Java 24 the first call prints a four-line
 * {@code WARNING: A terminally deprecated method in sun.misc.Unsafe has been called ... by
 * com.kenai.jffi.UnsafeMemoryIO$UnsafeMemoryIO64} on stderr (JEP 498), which {@code
 * --enable-native-access} does not silence, and a later release will make those methods throw. jffi
 * reads the system property {@value #PROPERTY} once, when {@code MemoryIO} initializes, and with
 * {@code true} moves memory through its own JNI functions instead. So on Java 24 and later this
 * class sets it, unless the application has set it either way (its choice wins: {@code
 * -Djffi.unsafe.disabled=false} together with {@code --sun-misc-unsafe-memory-access=allow} keeps
 * Unsafe without the warning). On Java 17 to 23 nothing changes.
 *
 * <p>Cost: every native memory read or write of jffi becomes a JNI call instead of an intrinsic, a
 * few per key-value operation (the buffer proxy's size, address and checksum reads and the copies),
 * so small reads may be a little slower on Java 24+.
 *
 * <p>The setting only takes effect if nothing in the JVM has initialized jffi's {@code MemoryIO}
 * before; another jnr-based library that loads first decides for the whole JVM.
 */
final class JffiSettings {
  /** jffi's switch from {@code sun.misc.Unsafe} to its JNI memory functions. */
  static final String PROPERTY = "jffi.unsafe.disabled";

  /** The first Java release that warns on {@code sun.misc.Unsafe} memory access by default. */
  static final int FIRST_WARNING_RELEASE = 24;

  private JffiSettings() {}

  /** Sets {@value #PROPERTY} on Java 24+ unless already set; idempotent, never throws. */
  static void apply() {
    if (Runtime.version().feature() < FIRST_WARNING_RELEASE) {
      return;
    }
    try {
      if (System.getProperty(PROPERTY) == null) {
        System.setProperty(PROPERTY, "true");
      }
    } catch (SecurityException e) {
      // A JVM that forbids setting properties keeps jffi's default (a warning, not a failure).
    }
  }
}
