package io.kv4j.lmdb;

import io.kv4j.StoreClosedException;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreException;
import io.kv4j.StoreIOException;
import java.nio.file.Path;
import org.lmdbjava.Dbi;
import org.lmdbjava.Env;
import org.lmdbjava.LmdbException;
import org.lmdbjava.LmdbNativeException;

/** Turns lmdbjava's exceptions into kv4j's, keeping the native error as the cause. */
final class Errors {
  /** The flags lmdbjava's own ByteBuffer proxies need on Java 17+. */
  static final String JVM_FLAGS =
      "--add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/sun.nio.ch=ALL-UNNAMED";

  private Errors() {}

  /**
   * Translates an exception thrown by lmdbjava during an operation or at open.
   *
   * @param describe the store, for the message
   * @param dataFile LMDB's data file, for corruption reports
   * @param e the exception
   * @return the exception to throw
   */
  static RuntimeException translate(String describe, Path dataFile, RuntimeException e) {
    if (e instanceof ArrayProxy.Damage) {
      long offset = ((ArrayProxy.Damage) e).offset;
      return new StoreCorruptedException(
          describe
              + ": "
              + dataFile
              + ": "
              + e.getMessage()
              + (offset >= 0 ? " (record at offset " + offset + ")" : ""),
          dataFile,
          offset,
          e);
    }
    if (!(e instanceof LmdbException)) {
      return e;
    }
    String what = describe + ": " + e.getMessage();
    if (e instanceof Env.FileInvalidException
        || e instanceof Env.VersionMismatchException
        || e instanceof LmdbNativeException.PageCorruptedException
        || e instanceof LmdbNativeException.PageNotFoundException
        || e instanceof LmdbNativeException.PanicException
        || e instanceof Dbi.IncompatibleException
        || e instanceof Dbi.BadDbiException) {
      return new StoreCorruptedException(
          what + " (" + dataFile + " is damaged or is not an LMDB data file)", dataFile, -1, e);
    }
    if (e instanceof Dbi.BadValueSizeException) {
      return new IllegalArgumentException(what + " (a key or value size LMDB does not accept)", e);
    }
    if (e instanceof Env.ReadersFullException) {
      return new StoreException(
          what
              + ": every reader slot is taken by concurrent reads and open cursors;"
              + " close cursors or raise the 'max-readers' option",
          e);
    }
    if (e instanceof Env.AlreadyClosedException) {
      StoreClosedException c = new StoreClosedException(describe + " is closed");
      c.initCause(e);
      return c;
    }
    if (e instanceof LmdbNativeException) {
      return new StoreIOException(what, e);
    }
    return new StoreException(what, e);
  }

  /**
   * Translates a failure to initialize lmdbjava (class initialization, native library loading).
   * lmdbjava's {@code ByteBuffer} proxies fail this way when the JVM flags are missing; this engine
   * does not use them, but if a future lmdbjava needs reflective access elsewhere, the user gets
   * the exact flags rather than a bare {@code InaccessibleObjectException}.
   *
   * @param describe the store, for the message
   * @param t what was thrown
   * @return the exception to throw
   */
  static RuntimeException initFailure(String describe, Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof java.lang.reflect.InaccessibleObjectException) {
        return new IllegalStateException(
            describe
                + ": lmdbjava cannot access JDK internals on this JVM ("
                + c.getMessage()
                + "). Start the JVM with: "
                + JVM_FLAGS,
            t);
      }
    }
    return new StoreException(
        describe
            + ": the LMDB native library (bundled in lmdbjava 0.9.1 for x86_64/aarch64 Linux,"
            + " macOS and Windows) failed to load: "
            + t,
        t);
  }
}
