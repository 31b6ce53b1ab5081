package io.kv4j.hashlog;

import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Creates memory mappings and releases them deterministically: a retired segment's file is already
 * deleted, and its disk space comes back only when its mapping goes, which the garbage collector
 * might do much later.
 *
 * <ul>
 *   <li><b>Java 22 and later</b>: each mapping belongs to its own shared {@code
 *       java.lang.foreign.Arena} ({@code FileChannel.map(mode, offset, size, arena)}), and closing
 *       the arena unmaps it. Found by reflection, since the project compiles for Java 17. A stray
 *       access after that throws {@link IllegalStateException} instead of crashing the JVM.
 *   <li><b>Java 17 to 21</b>: there is no public unmap; {@code sun.misc.Unsafe.invokeCleaner}
 *       (module jdk.unsupported) does it. Java 23 deprecated it for removal and Java 24 warns on
 *       its first use, which is why newer runtimes take the other path. If it is not available the
 *       mapping is left to the garbage collector.
 * </ul>
 *
 * <p>The store unmaps only after every reader has left (see {@link ReaderGuard}).
 */
final class Mappings {
  private static final MethodHandle OF_SHARED; // () -> Arena
  private static final MethodHandle
      MAP; // (FileChannel, MapMode, long, long, Arena) -> MemorySegment
  private static final MethodHandle AS_BYTE_BUFFER; // (MemorySegment) -> ByteBuffer
  private static final Map<ByteBuffer, AutoCloseable> ARENAS = new IdentityHashMap<>(); // by itself

  private static final Object UNSAFE;
  private static final Method INVOKE_CLEANER;

  static {
    MethodHandle ofShared = null;
    MethodHandle map = null;
    MethodHandle asByteBuffer = null;
    if (Runtime.version().feature() >= 22) {
      try {
        MethodHandles.Lookup l = MethodHandles.publicLookup();
        Class<?> arena = Class.forName("java.lang.foreign.Arena");
        Class<?> segment = Class.forName("java.lang.foreign.MemorySegment");
        ofShared = l.findStatic(arena, "ofShared", MethodType.methodType(arena));
        map =
            l.findVirtual(
                FileChannel.class,
                "map",
                MethodType.methodType(
                    segment, FileChannel.MapMode.class, long.class, long.class, arena));
        asByteBuffer =
            l.findVirtual(segment, "asByteBuffer", MethodType.methodType(ByteBuffer.class));
      } catch (ReflectiveOperationException | RuntimeException e) {
        ofShared = null;
      }
    }
    OF_SHARED = ofShared;
    MAP = map;
    AS_BYTE_BUFFER = asByteBuffer;

    Object u = null;
    Method m = null;
    if (OF_SHARED == null) {
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
    }
    UNSAFE = u;
    INVOKE_CLEANER = m;
  }

  private Mappings() {}

  /** Whether mappings are released through arenas (Java 22+), for tests. */
  static boolean usesArenas() {
    return OF_SHARED != null;
  }

  /** Maps {@code size} bytes of {@code ch} from offset 0; release with {@link #unmap}. */
  static MappedByteBuffer map(FileChannel ch, FileChannel.MapMode mode, long size)
      throws IOException {
    if (OF_SHARED == null) {
      return ch.map(mode, 0, size);
    }
    AutoCloseable arena;
    try {
      arena = (AutoCloseable) OF_SHARED.invoke();
    } catch (Throwable t) {
      throw new IllegalStateException("hashlog: cannot create an arena for a mapping", t);
    }
    try {
      MappedByteBuffer b =
          (MappedByteBuffer) AS_BYTE_BUFFER.invoke(MAP.invoke(ch, mode, 0L, size, arena));
      synchronized (ARENAS) {
        ARENAS.put(b, arena);
      }
      return b;
    } catch (IOException | RuntimeException | Error e) {
      close(arena);
      throw e;
    } catch (Throwable t) {
      close(arena);
      throw new IOException("hashlog: mapping failed: " + t, t);
    }
  }

  /** Releases a mapping made by {@link #map}; nothing may touch it (or a slice of it) after. */
  static void unmap(ByteBuffer b) {
    if (b == null || !b.isDirect()) {
      return;
    }
    AutoCloseable arena;
    synchronized (ARENAS) {
      arena = ARENAS.remove(b);
    }
    if (arena != null) {
      close(arena);
      return;
    }
    if (INVOKE_CLEANER == null) {
      return;
    }
    try {
      INVOKE_CLEANER.invoke(UNSAFE, b);
    } catch (ReflectiveOperationException | RuntimeException e) {
      // Left to the garbage collector.
    }
  }

  private static void close(AutoCloseable arena) {
    try {
      arena.close();
    } catch (Exception e) {
      // Closing a shared arena fails only if it is closed already or still in use by a thread
      // confined to it, neither of which the store does: the mapping is left to the collector.
      HashLogStore.LOG.log(System.Logger.Level.WARNING, "hashlog: could not release a mapping", e);
    }
  }
}
