package io.kv4j.bench;

import java.io.IOException;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The local processes of the database servers a run talks to, so that {@link Quietness} counts
 * their CPU as the run's own work (every operation of a server engine is work done by the server)
 * rather than as "other processes" competing for the CPU.
 *
 * <p>How they are found (Linux {@code /proc}, once, when the watch starts):
 *
 * <ol>
 *   <li>the endpoints of each server engine's effective settings ({@code endpoints} URLs, {@code
 *       nodes} in cluster mode, else {@code host} and {@code port}); a host that is not this
 *       machine has no process here;
 *   <li>the inode of the socket listening on each endpoint's port ({@code /proc/net/tcp}, {@code
 *       tcp6}), and the process holding it ({@code /proc/<pid>/fd}); an etcd member's peers (its
 *       {@code --initial-cluster} peer URLs) join, since every write is a Raft commit on them too;
 *   <li>when a port is listening but its owner cannot be seen (the servers run as another user and
 *       this one is not root), every process named like that engine's server ({@code postgres},
 *       {@code mariadbd}/{@code mysqld}, {@code redis-server}, {@code etcd}) instead: coarser,
 *       since a process of that name serving someone else counts too.
 * </ol>
 *
 * <p>{@link #ticks()} sums, over those processes and all their descendants alive at that moment,
 * user + system time of the process and of its reaped children (so a PostgreSQL backend that ends
 * between two readings is still counted, in its parent's children time). The figures are {@code
 * /proc/stat} ticks, the unit of {@link CpuTimes}.
 */
final class ServerProcesses {
  /** The process names of each server engine's server, used when a port's owner is hidden. */
  static final Map<String, List<String>> NAMES =
      Map.of(
          "postgres", List.of("postgres"),
          "mysql", List.of("mariadbd", "mysqld"),
          "redis", List.of("redis-server"),
          "redis-sharded", List.of("redis-server"),
          "etcd", List.of("etcd"));

  private static final ServerProcesses NONE =
      new ServerProcesses(null, Map.of(), new Located(Set.of(), Set.of(), "", false));

  /** Looks again for a server that was not found at most this often (a member being restarted). */
  private static final long RELOCATE_NANOS = 5_000_000_000L;

  private final Path proc;
  private final Map<String, Map<String, String>> settings;
  private final String description;
  private Located located;
  private long locatedAt;
  private int restarts;
  private long lastSum = -1;
  private long cumulative;

  /** Every process seen alive, as first read: its parent and name (the times are read anew). */
  private final Map<Long, Stat> known = new HashMap<>();

  private ServerProcesses(Path proc, Map<String, Map<String, String>> settings, Located located) {
    this.proc = proc;
    this.settings = Map.copyOf(settings);
    this.description = located.description();
    this.located = located;
    this.locatedAt = System.nanoTime();
  }

  /**
   * What one search found.
   *
   * @param roots the processes holding the endpoints' listening sockets, and etcd peers
   * @param names the process names that count because a port's owner is hidden
   * @param description what was found, for the report
   * @param incomplete true when an endpoint was not found (not listening, hidden, elsewhere)
   */
  private record Located(
      Set<Long> roots, Set<String> names, String description, boolean incomplete) {
    Located {
      roots = Set.copyOf(roots);
      names = Set.copyOf(names);
    }
  }

  /** No server engine in the run. */
  static ServerProcesses none() {
    return NONE;
  }

  /** True when the run measures no server engine (not: when none was found). */
  boolean isNone() {
    return proc == null;
  }

  /**
   * What was found, for the report: each engine's endpoints and how their processes were found when
   * the watch started, and how many server processes ended during the run (a restart: the new
   * process is found again by its port; the interval of the restart counts nothing).
   */
  synchronized String description() {
    return restarts == 0
        ? description
        : description
            + "; "
            + restarts
            + (restarts == 1 ? " server process" : " server processes")
            + " ended during the run (restarted: found again by port)";
  }

  /** One endpoint of a server engine. */
  record Endpoint(String host, int port) {}

  /**
   * The endpoints of a server engine, from its effective settings: {@code endpoints} (etcd's member
   * URLs), else {@code nodes} when {@code mode=cluster} (Redis Cluster), else {@code host} and
   * {@code port}.
   *
   * @param settings option name to value, defaults included
   * @return the endpoints, empty when the settings name none
   */
  static List<Endpoint> endpoints(Map<String, String> settings) {
    List<Endpoint> out = new ArrayList<>();
    String urls = settings.get("endpoints");
    if (urls != null) {
      for (String u : urls.split(",")) {
        try {
          URI uri = URI.create(u.trim());
          if (uri.getHost() != null && uri.getPort() > 0) {
            out.add(new Endpoint(uri.getHost(), uri.getPort()));
          }
        } catch (IllegalArgumentException e) {
          // not a URL: the engine refuses it when it opens; nothing to watch here
        }
      }
    } else if ("cluster".equals(settings.get("mode")) && settings.get("nodes") != null) {
      for (String n : settings.get("nodes").split(",")) {
        hostPort(n.trim(), out);
      }
    } else if (settings.get("host") != null && settings.get("port") != null) {
      try {
        out.add(new Endpoint(settings.get("host"), Integer.parseInt(settings.get("port"))));
      } catch (NumberFormatException e) {
        // refused by the engine when it opens
      }
    }
    return out;
  }

  private static void hostPort(String hp, List<Endpoint> out) {
    int colon = hp.lastIndexOf(':');
    if (colon > 0) {
      try {
        out.add(new Endpoint(hp.substring(0, colon), Integer.parseInt(hp.substring(colon + 1))));
      } catch (NumberFormatException e) {
        // refused by the engine when it opens
      }
    }
  }

  /**
   * The listening TCP sockets of {@code /proc/net/tcp} or {@code tcp6}: port to socket inodes.
   *
   * @param text the file's content
   * @return local port to the inodes of the sockets in state LISTEN on it
   */
  static Map<Integer, Set<Long>> listening(String text) {
    Map<Integer, Set<Long>> out = new HashMap<>();
    for (String line : text.split("\n")) {
      String[] f = line.trim().split("\\s+");
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
      if (f.length < 10 || !f[0].endsWith(":") || !f[3].equals("0A")) {
        continue;
      }
      int colon = f[1].lastIndexOf(':');
      try {
        int port = Integer.parseInt(f[1].substring(colon + 1), 16);
        out.computeIfAbsent(port, p -> new TreeSet<>()).add(Long.parseLong(f[9]));
      } catch (NumberFormatException | StringIndexOutOfBoundsException e) {
        // a line of another shape: not a socket
      }
    }
    return out;
  }

  /**
   * One process's line of {@code /proc/<pid>/stat}.
   *
   * @param pid its id
   * @param name its command name (the {@code comm} field)
   * @param ppid its parent's id
   * @param ticks user + system time of it and of its reaped children, in clock ticks
   */
  record Stat(long pid, String name, long ppid, long ticks) {}

  /**
   * Parses {@code /proc/<pid>/stat}. The name is in parentheses and may hold spaces and parentheses
   * itself, so the fields are counted from its last closing parenthesis.
   *
   * @param text the file's content
   * @return the fields this class uses
   * @throws IllegalArgumentException if the text is not of that shape
   */
  static Stat parseStat(String text) {
    int open = text.indexOf('(');
    int close = text.lastIndexOf(')');
    if (open < 0 || close < open) {
      throw new IllegalArgumentException("not a /proc/<pid>/stat line: " + text);
    }
    String[] f = text.substring(close + 1).trim().split("\\s+");
    // state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime..
    if (f.length < 15) {
      throw new IllegalArgumentException("not a /proc/<pid>/stat line: " + text);
    }
    try {
      return new Stat(
          Long.parseLong(text.substring(0, open).trim()),
          text.substring(open + 1, close),
          Long.parseLong(f[1]),
          Long.parseLong(f[11])
              + Long.parseLong(f[12])
              + Long.parseLong(f[13])
              + Long.parseLong(f[14]));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("not a /proc/<pid>/stat line: " + text, e);
    }
  }

  /**
   * The peer ports of an etcd member's command line ({@code --initial-cluster
   * m1=http://127.0.0.1:2380,...} or {@code --initial-cluster=...}).
   *
   * @param cmdline {@code /proc/<pid>/cmdline}: the arguments, NUL-separated
   * @return the ports, empty when the flag is absent
   */
  static List<Integer> peerPorts(String cmdline) {
    String[] args = cmdline.split("\0");
    String value = null;
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--initial-cluster") && i + 1 < args.length) {
        value = args[i + 1];
      } else if (args[i].startsWith("--initial-cluster=")) {
        value = args[i].substring("--initial-cluster=".length());
      }
    }
    List<Integer> out = new ArrayList<>();
    if (value != null) {
      for (String member : value.split(",")) {
        int eq = member.indexOf('=');
        try {
          int port = URI.create(member.substring(eq + 1).trim()).getPort();
          if (port > 0) {
            out.add(port);
          }
        } catch (IllegalArgumentException e) {
          // a member URL of another shape: its process is not found, nothing worse
        }
      }
    }
    return out;
  }

  /**
   * Finds the local server processes of the run's server engines.
   *
   * @param proc the {@code /proc} folder ({@code Path.of("/proc")}; tests pass a fixture)
   * @param settings each server engine's effective settings, by engine id
   * @return what was found; {@link #none()} when {@code settings} is empty
   */
  static ServerProcesses find(Path proc, Map<String, Map<String, String>> settings) {
    if (settings.isEmpty()) {
      return NONE;
    }
    ServerProcesses found = new ServerProcesses(proc, settings, locate(proc, settings));
    found.ticks(); // reads every process's parent and name once, before the run
    return found;
  }

  private static Located locate(Path proc, Map<String, Map<String, String>> settings) {
    Map<Integer, Set<Long>> listening = new HashMap<>();
    for (String f : List.of("net/tcp", "net/tcp6")) {
      read(proc.resolve(f))
          .ifPresent(
              t -> listening(t).forEach((p, s) -> listening.merge(p, s, ServerProcesses::union)));
    }
    Map<Long, Long> owners = socketOwners(proc);
    Set<Long> roots = new TreeSet<>();
    Set<String> names = new TreeSet<>();
    List<String> parts = new ArrayList<>();
    boolean incomplete = false;
    for (Map.Entry<String, Map<String, String>> e : new TreeMap<>(settings).entrySet()) {
      List<String> found = new ArrayList<>();
      List<String> hidden = new ArrayList<>();
      List<String> elsewhere = new ArrayList<>();
      for (Endpoint ep : endpoints(e.getValue())) {
        String at = ep.host() + ":" + ep.port();
        Set<Long> inodes = listening.get(ep.port());
        if (!isLocal(ep.host()) || inodes == null) {
          elsewhere.add(at);
          incomplete = true;
          continue;
        }
        Set<Long> pids = ownersOf(inodes, owners);
        if (pids.isEmpty()) {
          hidden.add(at);
          incomplete = true;
          continue;
        }
        found.add(at + " (pid " + join(pids) + ")");
        roots.addAll(pids);
        for (long pid : pids) {
          Set<Long> peers = new TreeSet<>();
          read(proc.resolve(pid + "/cmdline"))
              .ifPresent(
                  c -> {
                    for (int port : peerPorts(c)) {
                      if (port != ep.port() && listening.containsKey(port)) {
                        peers.addAll(ownersOf(listening.get(port), owners));
                      }
                    }
                  });
          peers.removeAll(pids);
          if (!peers.isEmpty()) {
            found.add("its cluster peers (pid " + join(peers) + ")");
            roots.addAll(peers);
          }
        }
      }
      List<String> says = new ArrayList<>(found);
      if (!hidden.isEmpty()) {
        List<String> n = NAMES.getOrDefault(e.getKey(), List.of());
        names.addAll(n);
        says.add(
            String.join(", ", hidden)
                + " (owner not visible to this user: every process named "
                + String.join(" or ", n)
                + ")");
      }
      if (!elsewhere.isEmpty()) {
        says.add(String.join(", ", elsewhere) + " (not listening on this machine: not counted)");
      }
      parts.add(e.getKey() + " " + (says.isEmpty() ? "(no endpoint)" : String.join(", ", says)));
    }
    return new Located(roots, names, String.join("; ", parts), incomplete);
  }

  private static Set<Long> union(Set<Long> a, Set<Long> b) {
    Set<Long> u = new TreeSet<>(a);
    u.addAll(b);
    return u;
  }

  private static Set<Long> ownersOf(Set<Long> inodes, Map<Long, Long> owners) {
    Set<Long> pids = new TreeSet<>();
    for (long inode : inodes) {
      Long pid = owners.get(inode);
      if (pid != null) {
        pids.add(pid);
      }
    }
    return pids;
  }

  private static String join(Set<Long> pids) {
    List<String> s = new ArrayList<>();
    pids.forEach(p -> s.add(String.valueOf(p)));
    return String.join(", ", s);
  }

  /** Socket inode to the process holding it, from every {@code /proc/<pid>/fd} readable here. */
  private static Map<Long, Long> socketOwners(Path proc) {
    Map<Long, Long> out = new HashMap<>();
    for (long pid : pids(proc)) {
      try (DirectoryStream<Path> fds = Files.newDirectoryStream(proc.resolve(pid + "/fd"))) {
        for (Path fd : fds) {
          String target;
          try {
            target = Files.readSymbolicLink(fd).toString();
          } catch (IOException | UnsupportedOperationException e) {
            continue; // closed meanwhile
          }
          if (target.startsWith("socket:[") && target.endsWith("]")) {
            try {
              out.putIfAbsent(Long.parseLong(target.substring(8, target.length() - 1)), pid);
            } catch (NumberFormatException e) {
              // not a socket inode
            }
          }
        }
      } catch (IOException | DirectoryIteratorException e) {
        // another user's process (not root), or one that ended (also while its fds were listed):
        // its sockets stay unowned here
      }
    }
    return out;
  }

  private static List<Long> pids(Path proc) {
    List<Long> out = new ArrayList<>();
    try (DirectoryStream<Path> d = Files.newDirectoryStream(proc)) {
      for (Path p : d) {
        String n = p.getFileName().toString();
        if (!n.isEmpty() && n.length() < 19 && n.chars().allMatch(Character::isDigit)) {
          out.add(Long.parseLong(n));
        }
      }
    } catch (IOException | DirectoryIteratorException e) {
      // no /proc: nothing found
    }
    return out;
  }

  private static Optional<String> read(Path p) {
    try {
      return Optional.of(Files.readString(p, StandardCharsets.ISO_8859_1));
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  private static boolean isLocal(String host) {
    try {
      InetAddress a = InetAddress.getByName(host);
      return a.isLoopbackAddress()
          || a.isAnyLocalAddress()
          || NetworkInterface.getByInetAddress(a) != null;
    } catch (IOException e) {
      return false; // unknown host: the engine will fail to connect; nothing here to count
    }
  }

  /**
   * The servers' CPU time since {@link #find}: at each call the sum of {@link Stat#ticks()} over
   * the processes found, the processes named like a hidden server, and all their descendants alive
   * now; what that sum gained since the last call is added up. A server process that ended (a
   * restart) is looked for again by its port; an endpoint not found is looked for again every 5 s.
   *
   * <p>Reading every process's {@code stat} costs about 1 ms each on a loaded machine (a JVM's sums
   * over its threads), too much once a second; so each process's parent and name are read once,
   * when it is first seen, and only the counted processes' times are read each call.
   *
   * @return clock ticks since {@link #find}, or -1 without {@code /proc} (or when {@link
   *     #isNone()})
   */
  synchronized long ticks() {
    if (proc == null) {
      return -1;
    }
    List<Long> alive = pids(proc);
    if (alive.isEmpty()) {
      return -1;
    }
    Set<Long> aliveSet = new HashSet<>(alive);
    known.keySet().retainAll(aliveSet);
    for (long pid : alive) {
      if (!known.containsKey(pid)) {
        Stat st = stat(pid);
        if (st != null) {
          known.put(pid, st);
        }
      }
    }
    boolean ended = !aliveSet.containsAll(located.roots());
    if (ended || (located.incomplete() && System.nanoTime() - locatedAt > RELOCATE_NANOS)) {
      if (ended) {
        restarts++;
      }
      located = locate(proc, settings);
      locatedAt = System.nanoTime();
    }
    long sum = 0;
    for (long pid : counted(known.values(), located.roots(), located.names())) {
      Stat st = stat(pid);
      if (st != null) {
        sum += st.ticks();
      }
    }
    // A sum that drops lost a process with all its past time (a server restarted, a child not
    // reaped by a counted parent): that interval counts nothing rather than a negative time.
    if (lastSum >= 0) {
      cumulative += Math.max(0, sum - lastSum);
    }
    lastSum = sum;
    return cumulative;
  }

  private Stat stat(long pid) {
    Optional<String> text = read(proc.resolve(pid + "/stat"));
    if (text.isEmpty()) {
      return null; // ended meanwhile
    }
    try {
      return parseStat(text.get());
    } catch (IllegalArgumentException e) {
      return null; // not of the documented shape: left out
    }
  }

  /**
   * The roots, the processes with one of the names, and every descendant of those.
   *
   * @param all every process alive
   * @param roots the ids found by port
   * @param names the names of hidden servers
   * @return their ids
   */
  static Set<Long> counted(Iterable<Stat> all, Set<Long> roots, Set<String> names) {
    Map<Long, List<Stat>> children = new HashMap<>();
    List<Stat> todo = new ArrayList<>();
    for (Stat s : all) {
      children.computeIfAbsent(s.ppid(), p -> new ArrayList<>()).add(s);
      if (roots.contains(s.pid()) || names.contains(s.name())) {
        todo.add(s);
      }
    }
    Set<Long> out = new LinkedHashSet<>();
    while (!todo.isEmpty()) {
      Stat s = todo.remove(todo.size() - 1);
      if (out.add(s.pid())) {
        todo.addAll(children.getOrDefault(s.pid(), List.of()));
      }
    }
    return out;
  }
}
