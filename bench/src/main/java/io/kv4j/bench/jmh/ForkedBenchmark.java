package io.kv4j.bench.jmh;

import org.openjdk.jmh.annotations.Fork;

/**
 * The fork every benchmark class runs in: one JVM with {@link JvmFlags}, the same for every engine.
 * JMH reads {@link Fork} from the superclass ({@code @Fork} is {@code @Inherited}), so the list of
 * flags stands once here instead of on each benchmark class (an annotation cannot take the array
 * from a constant).
 */
@Fork(
    value = 1,
    jvmArgsAppend = {
      JvmFlags.HEAP_MIN,
      JvmFlags.HEAP_MAX,
      JvmFlags.OPEN_NIO,
      JvmFlags.OPEN_NIO_CH,
      JvmFlags.NATIVE,
      JvmFlags.EXPORT_REF,
      JvmFlags.EXPORT_NIO_CH,
      JvmFlags.EXPORT_JAVAC,
      JvmFlags.OPEN_LANG,
      JvmFlags.OPEN_REFLECT,
      JvmFlags.NO_ANALYTICS
    })
public abstract class ForkedBenchmark {
  /** For the benchmark classes; JMH instantiates those. */
  protected ForkedBenchmark() {}
}
