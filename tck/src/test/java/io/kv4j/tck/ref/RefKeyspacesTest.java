package io.kv4j.tck.ref;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import io.kv4j.spi.StoreDirectory;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The ref engine's keyspaces in its log: crash atomicity of a batch across them, old logs. */
class RefKeyspacesTest {
  @TempDir Path tmp;

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static StoreConfig config(Path dir) {
    return StoreConfig.builder("ref").path(dir).durability(Durability.BUFFERED).build();
  }

  /** A copy of an open store's files, as a kill -9 would leave them, its log cut to a length. */
  private static Path crashCopy(Path from, Path to, long logLength) throws IOException {
    Files.createDirectories(to);
    Files.copy(
        from.resolve(StoreDirectory.IDENTITY_FILE), to.resolve(StoreDirectory.IDENTITY_FILE));
    Files.copy(from.resolve(RefStore.LOG), to.resolve(RefStore.LOG));
    try (FileChannel ch = FileChannel.open(to.resolve(RefStore.LOG), StandardOpenOption.WRITE)) {
      ch.truncate(logLength);
    }
    return to;
  }

  @Test
  void crashDuringABatchAcrossKeyspaces_replaysItWholeOrNotAtAll() throws IOException {
    Path dir = tmp.resolve("store");
    try (Store s = Stores.open(config(dir))) {
      s.put(b("k"), b("before"));
      s.keyspace("users").put(b("k"), b("before"));
      long before = Files.size(dir.resolve(RefStore.LOG));
      s.write(
          new WriteBatch()
              .put(b("k"), b("after"))
              .put("users", b("k"), b("after"))
              .put("orders", b("k"), b("after")));
      long after = Files.size(dir.resolve(RefStore.LOG));
      assertThat(after).as("the batch was written as one record").isGreaterThan(before + 8);
      for (long length :
          new long[] {before, before + 1, before + 8, (before + after) / 2, after - 1, after}) {
        Path copy = crashCopy(dir, tmp.resolve("crash-" + length), length);
        boolean whole = length == after;
        try (Store r = Stores.open(config(copy))) {
          String at =
              "log cut to " + length + " of " + after + " bytes (batch from " + before + ")";
          assertThat(r.get(b("k"))).as("own key, " + at).isEqualTo(b(whole ? "after" : "before"));
          assertThat(r.keyspace("users").get(b("k")))
              .as("keyspace users, " + at)
              .isEqualTo(b(whole ? "after" : "before"));
          assertThat(r.keyspaces())
              .as("the keyspace the batch created, " + at)
              .containsExactlyElementsOf(
                  whole ? java.util.List.of("orders", "users") : java.util.List.of("users"));
        }
      }
    }
  }

  @Test
  void aLogWrittenBeforeKeyspaces_opensAndGainsThem() throws IOException {
    Path dir = tmp.resolve("old");
    Stores.open(config(dir)).close(); // the identity file and a log
    byte[] key = b("k");
    byte[] value = b("v");
    ByteBuffer payload = ByteBuffer.allocate(4 + 1 + 4 + key.length + 4 + value.length);
    payload.putInt(1).put((byte) 0).putInt(key.length).put(key).putInt(value.length).put(value);
    ByteBuffer rec = ByteBuffer.allocate(8 + payload.capacity());
    rec.putInt(payload.capacity()).putInt(0).put(payload.array());
    CRC32C c = new CRC32C();
    c.update(rec.array(), 0, 4);
    c.update(payload.array());
    rec.putInt(4, (int) c.getValue());
    long length = 20 + rec.capacity();
    ByteBuffer header = ByteBuffer.allocate(20);
    header.put(b("KV4JREF2")).putLong(length);
    CRC32C hc = new CRC32C();
    hc.update(header.array(), 0, 16);
    header.putInt((int) hc.getValue());
    Path log = dir.resolve(RefStore.LOG);
    Files.write(log, header.array());
    Files.write(log, rec.array(), StandardOpenOption.APPEND);
    try (Store s = Stores.open(config(dir))) {
      assertThat(s.get(key)).as("a key of the old log").isEqualTo(value);
      assertThat(s.keyspaces()).as("an old log has no keyspaces").isEmpty();
      s.keyspace("users").put(key, b("u"));
      s.verify();
    }
    try (Store s = Stores.open(config(dir))) {
      assertThat(s.keyspaces()).as("a keyspace added to an old store").containsExactly("users");
      assertThat(s.keyspace("users").get(key)).isEqualTo(b("u"));
      assertThat(s.get(key)).isEqualTo(value);
    }
  }
}
