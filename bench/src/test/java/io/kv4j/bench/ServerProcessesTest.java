package io.kv4j.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Finding the server processes a run talks to, and summing their CPU time, on a fixture {@code
 * /proc} (text as Linux writes it, socket links as {@code /proc/<pid>/fd} holds them).
 */
class ServerProcessesTest {
  private static final String TCP_HEADER =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout"
          + " inode\n";

  @TempDir Path proc;

  /** One line of /proc/net/tcp: local 127.0.0.1:port (or 0.0.0.0), a state, an inode. */
  private static String tcp(int n, String ip, int port, String state, long inode) {
    return String.format(
        "  %d: %s:%04X 00000000:0000 %s 00000000:00000000 00:00000000 00000000   108        0 %d 1"
            + " 0000000000000000 100 0 0 10 0\n",
        n, ip, port, state, inode);
  }

  private static String stat(long pid, String comm, long ppid, long u, long s, long cu, long cs) {
    return String.format(
        "%d (%s) S %d %d %d 0 -1 4194560 6296 169 30 0 %d %d %d %d 20 0 11 0 20085 7019220992"
            + " 35638 18446744073709551615 4202496 14685997\n",
        pid, comm, ppid, pid, pid, u, s, cu, cs);
  }

  private void process(long pid, String comm, long ppid, long ticks, long... sockets)
      throws IOException {
    process(pid, comm, ppid, ticks, "", sockets);
  }

  private void process(
      long pid, String comm, long ppid, long ticks, String cmdline, long... sockets)
      throws IOException {
    Path dir = Files.createDirectories(proc.resolve(String.valueOf(pid)));
    // a quarter each in user, system, reaped children's user and system time
    long q = ticks / 4;
    Files.writeString(dir.resolve("stat"), stat(pid, comm, ppid, q, q, q, ticks - 3 * q));
    Files.writeString(dir.resolve("cmdline"), cmdline, StandardCharsets.ISO_8859_1);
    if (sockets.length > 0) {
      Path fd = Files.createDirectories(dir.resolve("fd"));
      for (int i = 0; i < sockets.length; i++) {
        Files.createSymbolicLink(fd.resolve(String.valueOf(i + 3)), Path.of(socket(sockets[i])));
      }
    }
  }

  /** Rewrites a process's stat with a new total time. */
  private void setTicks(long pid, String comm, long ppid, long ticks) throws IOException {
    long q = ticks / 4;
    Files.writeString(proc.resolve(pid + "/stat"), stat(pid, comm, ppid, q, q, q, ticks - 3 * q));
  }

  private void delete(long pid) throws IOException {
    try (var files = Files.walk(proc.resolve(String.valueOf(pid)))) {
      files.sorted((a, b) -> b.compareTo(a)).forEach(p -> p.toFile().delete());
    }
  }

  private static String socket(long inode) {
    return "socket:[" + inode + "]";
  }

  /**
   * PostgreSQL (postmaster with two children), MariaDB whose socket owner is hidden (no readable fd
   * folder, as for another user's process when not root), a three-member etcd cluster, a Redis the
   * run does not measure and the bench's own JVM with a client socket.
   */
  private void machine() throws IOException {
    Files.createDirectories(proc.resolve("net"));
    Files.writeString(
        proc.resolve("net/tcp"),
        TCP_HEADER
            + tcp(0, "0100007F", 5432, "0A", 100)
            + tcp(1, "00000000", 6379, "0A", 200)
            + tcp(2, "0100007F", 5432, "01", 300) // an established connection: not a listener
            + tcp(3, "0100007F", 2379, "0A", 400)
            + tcp(4, "0100007F", 2380, "0A", 401)
            + tcp(5, "0100007F", 22380, "0A", 402)
            + tcp(6, "0100007F", 32380, "0A", 403));
    Files.writeString(
        proc.resolve("net/tcp6"),
        TCP_HEADER + tcp(0, "00000000000000000000000001000000", 3306, "0A", 500));
    process(1, "systemd", 0, 1000);
    process(2957, "postgres", 1, 40, 100);
    process(2958, "postgres", 2957, 8);
    process(4000, "postgres", 2957, 4);
    process(3000, "mariadbd-safe", 1, 12);
    process(3140, "mariadbd", 3000, 52); // no fd folder: owner of :3306 not visible
    String etcdArgs =
        String.join(
            "\0",
            "etcd",
            "--name",
            "m1",
            "--initial-cluster",
            "m1=http://127.0.0.1:2380,m2=http://127.0.0.1:22380,m3=http://127.0.0.1:32380",
            "");
    process(3423, "etcd", 1, 32, etcdArgs, 400, 401);
    process(3427, "etcd", 1, 20, 402);
    process(3431, "etcd", 1, 12, 403);
    process(6000, "redis-server", 1, 100, 200);
    process(7000, "java", 1, 5000, 300);
  }

  private static Map<String, Map<String, String>> servers() {
    Map<String, Map<String, String>> m = new LinkedHashMap<>();
    m.put("postgres", Map.of("host", "127.0.0.1", "port", "5432", "table", "kv4j_bench_main"));
    m.put("mysql", Map.of("host", "localhost", "port", "3306"));
    m.put("etcd", Map.of("endpoints", "http://127.0.0.1:2379"));
    return m;
  }

  @Test
  void find_byListeningPorts_countsOwnersTheirChildrenAndEtcdPeers() throws IOException {
    machine();
    ServerProcesses s = ServerProcesses.find(proc, servers());
    assertThat(s.isNone()).isFalse();
    assertThat(s.description())
        .isEqualTo(
            "etcd 127.0.0.1:2379 (pid 3423), its cluster peers (pid 3427, 3431); mysql"
                + " localhost:3306 (owner not visible to this user: every process named mariadbd"
                + " or mysqld); postgres 127.0.0.1:5432 (pid 2957)");
    assertThat(s.ticks()).as("counted from find on").isZero();
    // Every process uses 10 more ticks: counted are postgres and its two children, mariadbd (by
    // name; not its parent mariadbd-safe) and the three etcd members; not redis (not measured),
    // not the JVM, not systemd.
    setTicks(1, "systemd", 0, 1010);
    setTicks(2957, "postgres", 1, 50);
    setTicks(2958, "postgres", 2957, 18);
    setTicks(4000, "postgres", 2957, 14);
    setTicks(3000, "mariadbd-safe", 1, 22);
    setTicks(3140, "mariadbd", 3000, 62);
    setTicks(3423, "etcd", 1, 42);
    setTicks(3427, "etcd", 1, 30);
    setTicks(3431, "etcd", 1, 22);
    setTicks(6000, "redis-server", 1, 110);
    setTicks(7000, "java", 1, 5010);
    assertThat(s.ticks()).isEqualTo(7 * 10);
  }

  @Test
  void ticks_aServerRestarted_isFoundAgainByPortAndTheRestartCountsNothing() throws IOException {
    machine();
    ServerProcesses s = ServerProcesses.find(proc, Map.of("etcd", servers().get("etcd")));
    assertThat(s.ticks()).isZero();
    // Member m2 is restarted: its 20 ticks are gone with it, the new process holds its port.
    delete(3427);
    process(9000, "etcd", 1, 7, 402);
    assertThat(s.ticks()).as("a sum that drops counts nothing").isZero();
    assertThat(s.description())
        .endsWith("; 1 server process ended during the run (restarted: found again by port)");
    setTicks(9000, "etcd", 1, 12);
    setTicks(3423, "etcd", 1, 35);
    assertThat(s.ticks()).isEqualTo(5 + 3);
  }

  @Test
  void ticks_aBackendThatEnds_staysCountedInItsParentsChildrenTime() throws IOException {
    machine();
    ServerProcesses s =
        ServerProcesses.find(proc, Map.of("postgres", Map.of("host", "::1", "port", "5432")));
    assertThat(s.ticks()).isZero();
    // backend 4000 used 6 more ticks, ended and was reaped: its 10 ticks move to the postmaster's
    // children time; a new backend 4001 starts and uses 3.
    delete(4000);
    Files.writeString(proc.resolve("2957/stat"), stat(2957, "postgres", 1, 10, 10, 10 + 10, 10));
    process(4001, "postgres", 2957, 3);
    assertThat(s.ticks()).isEqualTo(6 + 3);
  }

  @Test
  void find_endpointNotOnThisMachine_countsNothingAndSaysSo() throws IOException {
    machine();
    ServerProcesses s =
        ServerProcesses.find(
            proc,
            Map.of(
                "postgres",
                Map.of("host", "203.0.113.5", "port", "5432"),
                "redis",
                Map.of("host", "127.0.0.1", "port", "6390")));
    assertThat(s.description())
        .isEqualTo(
            "postgres 203.0.113.5:5432 (not listening on this machine: not counted); redis"
                + " 127.0.0.1:6390 (not listening on this machine: not counted)");
    assertThat(s.ticks()).isZero();
  }

  @Test
  void find_damagedProcText_skipsWhatItCannotReadAndCountsTheRest() throws IOException {
    machine();
    Files.writeString(proc.resolve("net/tcp6"), "\0\0garbage\n  0: ::::\n");
    Files.createDirectories(proc.resolve("99999999999999999999999"));
    Files.createDirectories(proc.resolve("self"));
    process(8000, "postgres", 2957, 5);
    Files.writeString(proc.resolve("8000/stat"), "8000 (postgres) S 2957 garbage");
    Files.writeString(proc.resolve("2958/stat"), "");
    ServerProcesses s = ServerProcesses.find(proc, Map.of("postgres", servers().get("postgres")));
    assertThat(s.description()).isEqualTo("postgres 127.0.0.1:5432 (pid 2957)");
    assertThat(s.ticks()).isZero();
    // 2957 and 4000 count; the two damaged stat files are left out.
    setTicks(2957, "postgres", 1, 45);
    setTicks(4000, "postgres", 2957, 6);
    assertThat(s.ticks()).isEqualTo(5 + 2);
    Files.delete(proc.resolve("net/tcp"));
    assertThat(ServerProcesses.find(proc, Map.of("postgres", servers().get("postgres"))).ticks())
        .isZero();
  }

  @Test
  void find_noServerEngine_isNone() {
    ServerProcesses s = ServerProcesses.find(proc, Map.of());
    assertThat(s.isNone()).isTrue();
    assertThat(s.ticks()).isEqualTo(-1);
  }

  @Test
  void endpoints_followTheEnginesOptions() {
    assertThat(ServerProcesses.endpoints(Map.of("host", "db", "port", "5432")))
        .containsExactly(new ServerProcesses.Endpoint("db", 5432));
    // Redis standalone: host and port, the default nodes ignored; cluster: the nodes.
    Map<String, String> redis =
        Map.of("mode", "standalone", "host", "127.0.0.1", "port", "6379", "nodes", "h:7000");
    assertThat(ServerProcesses.endpoints(redis))
        .containsExactly(new ServerProcesses.Endpoint("127.0.0.1", 6379));
    Map<String, String> cluster = new LinkedHashMap<>(redis);
    cluster.put("mode", "cluster");
    cluster.put("nodes", "127.0.0.1:7000, 127.0.0.1:7001,bad");
    assertThat(ServerProcesses.endpoints(cluster))
        .containsExactly(
            new ServerProcesses.Endpoint("127.0.0.1", 7000),
            new ServerProcesses.Endpoint("127.0.0.1", 7001));
    assertThat(
            ServerProcesses.endpoints(
                Map.of("endpoints", "http://127.0.0.1:2379,https://[::1]:22379/, ::bad")))
        .containsExactly(
            new ServerProcesses.Endpoint("127.0.0.1", 2379),
            new ServerProcesses.Endpoint("[::1]", 22379));
    assertThat(ServerProcesses.endpoints(Map.of("port", "x"))).isEmpty();
  }

  @Test
  void listening_keepsOnlyListenersWithTheirPortAndInode() {
    Map<Integer, Set<Long>> l =
        ServerProcesses.listening(
            TCP_HEADER
                + tcp(0, "0100007F", 5432, "0A", 100)
                + tcp(1, "0100007F", 5432, "01", 300)
                + tcp(2, "00000000", 5432, "0A", 101)
                + "garbage line\n");
    assertThat(l).containsOnlyKeys(5432);
    assertThat(l.get(5432)).containsExactly(100L, 101L);
  }

  @Test
  void parseStat_nameWithSpacesAndParentheses_countsFieldsFromTheLastParenthesis() {
    ServerProcesses.Stat s =
        ServerProcesses.parseStat(stat(42, "postgres: 15/main: walwriter (x)", 7, 1, 2, 3, 4));
    assertThat(s)
        .isEqualTo(new ServerProcesses.Stat(42, "postgres: 15/main: walwriter (x)", 7, 10));
    assertThatThrownBy(() -> ServerProcesses.parseStat("42 (x) S 1 2"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ServerProcesses.parseStat(""))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void peerPorts_readBothFlagForms() {
    assertThat(
            ServerProcesses.peerPorts(
                "etcd\0--initial-cluster=a=http://127.0.0.1:2380,b=http://127.0.0.1:22380\0"))
        .containsExactly(2380, 22380);
    assertThat(ServerProcesses.peerPorts("redis-server\0127.0.0.1:6379\0")).isEmpty();
  }

  @Test
  void counted_descendantsOnce_evenWhenNamedAndFoundByPort() {
    List<ServerProcesses.Stat> all =
        List.of(
            new ServerProcesses.Stat(10, "postgres", 1, 5),
            new ServerProcesses.Stat(11, "postgres", 10, 7),
            new ServerProcesses.Stat(12, "psql", 11, 1),
            new ServerProcesses.Stat(20, "java", 1, 100));
    assertThat(ServerProcesses.counted(all, Set.of(10L), Set.of("postgres")))
        .containsExactlyInAnyOrder(10L, 11L, 12L);
  }
}
