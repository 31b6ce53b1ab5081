package io.kv4j.bench.jmh;

/**
 * The JVM flags every forked benchmark JVM gets, the same for every engine: a fixed heap, the opens
 * lmdbjava needs, native access for RocksDB and SQLite, and Chronicle Map's exports and opens. They
 * mirror the runner jar's manifest and the surefire argLine.
 */
final class JvmFlags {
  static final String HEAP_MIN = "-Xms2g";
  static final String HEAP_MAX = "-Xmx2g";
  static final String OPEN_NIO = "--add-opens=java.base/java.nio=ALL-UNNAMED";
  static final String OPEN_NIO_CH = "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED";
  static final String NATIVE = "--enable-native-access=ALL-UNNAMED";
  static final String EXPORT_REF = "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED";
  static final String EXPORT_NIO_CH = "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED";
  static final String EXPORT_JAVAC =
      "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED";
  static final String OPEN_LANG = "--add-opens=java.base/java.lang=ALL-UNNAMED";
  static final String OPEN_REFLECT = "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED";
  static final String NO_ANALYTICS = "-Dchronicle.analytics.disable=true";

  private JvmFlags() {}
}
