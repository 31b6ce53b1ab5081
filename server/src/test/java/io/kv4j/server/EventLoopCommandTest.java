package io.kv4j.server;

import static io.kv4j.server.ServerOptions.Setting.PORT;
import static io.kv4j.server.ServerOptions.Setting.THREADS;
import static io.kv4j.server.TestServer.await;
import static io.kv4j.server.TestServer.info;
import static io.kv4j.server.TestServer.readLine;
import static io.kv4j.server.TestServer.send;
import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.Store;
import io.kv4j.Stores;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/**
 * Commands split between the event loops and the workers: which engines may run commands on a loop,
 * replies in request order across the split, and a loop that never waits for a lock.
 */
class EventLoopCommandTest {
  @TempDir Path dir;

  private static ServerOptions options() {
    return ServerOptions.defaults().with(PORT, 0).with(THREADS, 1);
  }

  private static String mode(String uri, String policy) {
    try (TestServer server = new TestServer(uri, options().withLoopCommands(policy));
        Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
      return info(j, "kv4j_loop_mode");
    }
  }

  @Test
  void engineBlocking_letsOnlyEnginesThatDoNotWaitRunOnTheLoops() throws Exception {
    assertThat(mode("memory:", "auto")).isEqualTo("reads+writes");
    assertThat(mode("memory:", "reads")).isEqualTo("reads");
    assertThat(mode("memory:", "none")).isEqualTo("none");
    String buffered = "hashlog:" + dir.resolve("b") + "?durability=buffered";
    assertThat(mode(buffered, "auto")).isEqualTo("reads+writes");
    assertThat(mode(buffered, "reads")).isEqualTo("reads");
    // SYNC: reads on the loops, plain SETs through the committer, other writes on the workers.
    assertThat(mode("hashlog:" + dir.resolve("s") + "?durability=sync", "auto")).isEqualTo("reads");
    assertThat(mode("hashlog:" + dir.resolve("t") + "?durability=sync", "none")).isEqualTo("none");
    // A store wrapping the memory engine may block in its own ways: it is not taken for memory.
    try (Store memory = Stores.open("memory:")) {
      BlockingStore wrapped =
          new BlockingStore(memory, new CountDownLatch(0), new BlockingStore.FaultSwitch());
      TestServer server = new TestServer(wrapped, options(), null);
      try (Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
        assertThat(info(j, "kv4j_loop_mode")).isEqualTo("none");
      } finally {
        server.close();
      }
    }
    // Without workers every command runs on the loops anyway, through the connection's queue.
    try (TestServer server =
            new TestServer("memory:", options().with(ServerOptions.Setting.WORKERS, 0));
        Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
      assertThat(info(j, "kv4j_loop_mode")).isEqualTo("none");
      assertThat(j.set("k", "v")).isEqualTo("OK");
    }
  }

  /** A random pipeline of commands that run on the loop and commands that must not. */
  private static List<String> pipeline(Random rnd, int commands) {
    List<String> all = new ArrayList<>();
    for (int i = 0; i < commands; i++) {
      String k = "k" + rnd.nextInt(12);
      String k2 = "k" + rnd.nextInt(12);
      String c = "c" + rnd.nextInt(4);
      String line =
          switch (rnd.nextInt(24)) {
            case 0, 1, 2 -> "SET " + k + " v" + i;
            case 3, 4, 5 -> "GET " + k;
            case 6, 7 -> "INCR " + c;
            case 8 -> "APPEND " + k + " x";
            case 9 -> "DEL " + k + " " + k2;
            case 10 -> "EXISTS " + k + " " + k2 + " " + c;
            case 11 -> "MSET " + k + " m" + i + " " + k2 + " n" + i;
            case 12 -> "MGET " + k + " " + k2 + " " + c;
            case 13 -> "KEYS k1*";
            case 14 -> "DBSIZE";
            case 15 -> "SCAN 0 COUNT 5";
            case 16 -> "PING";
            case 17 ->
                "MULTI\r\nINCR " + c + "\r\nSET " + k + " t" + i + "\r\nGET " + k + "\r\nEXEC";
            case 18 -> "SELECT " + rnd.nextInt(2);
            case 19 -> "RENAME " + k + " " + k2;
            case 20 -> "GETSET " + k + " g" + i;
            case 21 -> "STRLEN " + k;
            case 22 -> "SETNX " + k + " s" + i;
            default -> "INCRBY " + c + " " + (rnd.nextInt(200) - 100);
          };
      all.add(line + "\r\n");
    }
    return all;
  }

  /**
   * Sends each batch of requests as one write followed by an ECHO of a marker, reads every byte
   * answered up to the marker's reply, and returns all answers in order.
   */
  private static String answers(TestServer server, List<String> batches) throws IOException {
    ByteArrayOutputStream got = new ByteArrayOutputStream();
    try (Socket s = server.socket()) {
      InputStream in = s.getInputStream();
      for (int b = 0; b < batches.size(); b++) {
        String marker = "end" + b;
        send(s, batches.get(b) + "ECHO " + marker + "\r\n");
        byte[] end =
            ("$" + marker.length() + "\r\n" + marker + "\r\n").getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream batch = new ByteArrayOutputStream();
        byte[] chunk = new byte[8192];
        while (!endsWith(batch.toByteArray(), end)) {
          int n = in.read(chunk);
          if (n < 0) {
            break;
          }
          batch.write(chunk, 0, n);
        }
        got.writeBytes(batch.toByteArray());
      }
    }
    return got.toString(StandardCharsets.UTF_8);
  }

  private static boolean endsWith(byte[] a, byte[] suffix) {
    if (a.length < suffix.length) {
      return false;
    }
    for (int i = 0; i < suffix.length; i++) {
      if (a[a.length - suffix.length + i] != suffix[i]) {
        return false;
      }
    }
    return true;
  }

  @Test
  void pipeline_answersAsAServerThatRunsEverythingOnWorkers() throws Exception {
    long seed = new Random().nextLong();
    Random rnd = new Random(seed);
    List<String> commands = pipeline(rnd, 3000);
    // Batches of 1 to 40 commands: a batch that finds the connection idle starts on the event
    // loop, so both paths run often (how often depends on scheduling: only "some" is asserted).
    List<String> requests = new ArrayList<>();
    for (int i = 0; i < commands.size(); ) {
      int n = Math.min(commands.size() - i, 1 + rnd.nextInt(40));
      requests.add(String.join("", commands.subList(i, i + n)));
      i += n;
    }
    String onLoops;
    String onWorkers;
    try (TestServer loop = new TestServer("memory:", options());
        Jedis j = new Jedis("127.0.0.1", loop.port(), 30_000)) {
      onLoops = answers(loop, requests);
      assertThat(Long.parseLong(info(j, "kv4j_loop_commands")))
          .as("seed %s: commands run on the event loop", seed)
          .isPositive();
      assertThat(Long.parseLong(info(j, "kv4j_loop_handoffs")))
          .as("seed %s: requests the loop handed to a worker", seed)
          .isPositive();
    }
    try (TestServer workers = new TestServer("memory:", options().withLoopCommands("none"));
        Jedis j = new Jedis("127.0.0.1", workers.port(), 30_000)) {
      onWorkers = answers(workers, requests);
      assertThat(info(j, "kv4j_loop_commands")).isEqualTo("0");
    }
    assertThat(onLoops)
        .as("seed %s: replies, event loop and workers vs workers only", seed)
        .isEqualTo(onWorkers);
    String last = "end" + (requests.size() - 1);
    assertThat(onLoops)
        .as("seed %s", seed)
        .endsWith("$" + last.length() + "\r\n" + last + "\r\n")
        .contains("+QUEUED");
  }

  @Test
  void writeOfALockedKey_goesToAWorkerWhileTheLoopServesOthersAndRepliesStayInOrder()
      throws Exception {
    try (TestServer server = new TestServer("memory:", options());
        Socket a = server.socket();
        Socket b = server.socket();
        Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
      KeyLocks locks = server.server.commands.data().locks;
      byte[] held = "held".getBytes(StandardCharsets.UTF_8);
      assertThat(locks.stripe(held))
          .isNotEqualTo(locks.stripe("other".getBytes(StandardCharsets.UTF_8)))
          .isNotEqualTo(locks.stripe("c".getBytes(StandardCharsets.UTF_8)));
      // This thread holds the key's stripe, as a running transaction or FLUSHDB would.
      ReentrantLock lock = locks.lockFor(held);
      try {
        send(a, "SET held v\r\nGET other\r\nINCR c\r\nPING\r\n");
        await(
            "the SET of the held key to be handed to a worker",
            () -> Long.parseLong(info(j, "kv4j_loop_handoffs")) >= 1);
        // The single event loop still serves another client, reads and writes.
        send(b, "SET other x\r\nGET other\r\n");
        assertThat(readLine(b)).isEqualTo("+OK");
        assertThat(readLine(b)).isEqualTo("$1");
        assertThat(readLine(b)).isEqualTo("x");
        assertThat(a.getInputStream().available())
            .as("nothing answered behind the waiting SET")
            .isZero();
      } finally {
        lock.unlock();
      }
      assertThat(readLine(a)).isEqualTo("+OK");
      // Ran after the SET, so after the other client's write.
      assertThat(readLine(a)).isEqualTo("$1");
      assertThat(readLine(a)).isEqualTo("x");
      assertThat(readLine(a)).isEqualTo(":1");
      assertThat(readLine(a)).isEqualTo("+PONG");
      assertThat(j.get("held")).isEqualTo("v");
    }
  }

  @Test
  void longPipeline_runsInTurnsOnTheLoopInOrder() throws Exception {
    int n = 5 * RespHandler.LOOP_TURN + 7;
    try (TestServer server = new TestServer("memory:", options());
        Socket s = server.socket();
        Jedis j = new Jedis("127.0.0.1", server.port(), 30_000)) {
      send(s, "INCR c\r\n".repeat(n) + "GET c\r\n");
      for (int i = 1; i <= n; i++) {
        assertThat(readLine(s)).isEqualTo(":" + i);
      }
      assertThat(readLine(s)).isEqualTo("$" + Integer.toString(n).length());
      assertThat(readLine(s)).isEqualTo(Integer.toString(n));
      assertThat(Long.parseLong(info(j, "kv4j_loop_commands"))).isGreaterThan(n);
    }
  }
}
