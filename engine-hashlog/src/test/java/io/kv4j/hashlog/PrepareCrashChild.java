package io.kv4j.hashlog;

import io.kv4j.Durability;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.concurrent.locks.LockSupport;

/**
 * Child JVM for {@link PreparedSegmentTest}: a BUFFERED store whose sealer stops for good in the
 * middle of making the next segment's file (its chunk of zeros written, its header not), printing
 * {@code preparing} there; the writer goes on, writing key i with {@link
 * PreparedSegmentTest#value(int)} forever and printing {@code ack i} after each write returns,
 * until it is killed.
 */
final class PrepareCrashChild {
  private PrepareCrashChild() {}

  public static void main(String[] args) {
    Path dir = Path.of(args[0]);
    PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true);
    FaultyStorage storage = new FaultyStorage();
    storage.beforeWriting(
        ".log.tmp",
        2, // the header, after the chunk of zeros
        () -> {
          out.println("preparing");
          while (true) {
            LockSupport.park(); // until SIGKILL
          }
        });
    try (HashLogStore s =
        TestStores.open(dir, Durability.BUFFERED, storage, PreparedSegmentTest.OPTIONS)) {
      for (int i = 0; ; i++) {
        s.put(PreparedSegmentTest.key(i), PreparedSegmentTest.value(i));
        out.println("ack " + i);
      }
    }
  }
}
