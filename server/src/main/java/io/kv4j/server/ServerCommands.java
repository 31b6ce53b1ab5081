package io.kv4j.server;

import io.kv4j.Feature;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** The server commands: SAVE, TIME, INFO, COMMAND and CONFIG. */
final class ServerCommands {
  static final String REDIS_VERSION = "7.2.0";
  static final String KV4J_VERSION = "0.1.0-SNAPSHOT";

  private final RespServer server;
  private final Dataset data;
  private final StoreHealth health;
  private final Commands commands;
  private final SharedStoreTransaction shared;

  ServerCommands(
      RespServer server,
      Dataset data,
      StoreHealth health,
      Commands commands,
      SharedStoreTransaction shared) {
    this.server = server;
    this.data = data;
    this.health = health;
    this.commands = commands;
    this.shared = shared;
  }

  void save(Session s, Request r, ByteBuf out) {
    data.store().sync();
    Reply.ok(out);
  }

  void time(Session s, Request r, ByteBuf out) {
    Instant now = Instant.now();
    Reply.arrayHeader(out, 2);
    Reply.bulk(out, Long.toString(now.getEpochSecond()));
    Reply.bulk(out, Long.toString(now.getNano() / 1000));
  }

  // ---- INFO ----

  void info(Session s, Request r, ByteBuf out) {
    List<String> wanted = new ArrayList<>();
    for (int i = 1; i < r.count(); i++) {
      wanted.add(r.string(i).toLowerCase(Locale.ROOT));
    }
    boolean every =
        wanted.isEmpty()
            || wanted.contains("all")
            || wanted.contains("everything")
            || wanted.contains("default");
    StringBuilder sb = new StringBuilder();
    if (every || wanted.contains("server")) {
      serverSection(sb);
    }
    if (every || wanted.contains("clients")) {
      sb.append("# Clients\r\nconnected_clients:")
          .append(server.connectedClients.get())
          .append("\r\nmaxclients:")
          .append(server.maxClients)
          .append("\r\nblocked_clients:0\r\nkv4j_query_buffers_bytes:")
          .append(server.bufferedBytes.get())
          .append("\r\n\r\n");
    }
    if (every || wanted.contains("memory")) {
      Runtime rt = Runtime.getRuntime();
      sb.append("# Memory\r\nused_memory:")
          .append(rt.totalMemory() - rt.freeMemory())
          .append("\r\nmaxmemory:")
          .append(rt.maxMemory())
          .append("\r\nmaxmemory_policy:noeviction\r\n\r\n");
    }
    if (every || wanted.contains("persistence")) {
      persistenceSection(sb);
    }
    if (every || wanted.contains("stats")) {
      statsSection(sb);
    }
    if (every || wanted.contains("replication")) {
      sb.append("# Replication\r\nrole:master\r\nconnected_slaves:0\r\n\r\n");
    }
    if (every || wanted.contains("kv4j")) {
      kv4jSection(sb);
    }
    if (every || wanted.contains("keyspace")) {
      keyspaceSection(sb);
    }
    Reply.bulk(out, sb.toString());
  }

  private void serverSection(StringBuilder sb) {
    long uptime = (System.currentTimeMillis() - server.startedMillis) / 1000;
    sb.append("# Server\r\n")
        .append("redis_version:")
        .append(REDIS_VERSION)
        .append("\r\n")
        .append("kv4j_server_version:")
        .append(KV4J_VERSION)
        .append("\r\n")
        .append("redis_mode:standalone\r\n")
        .append("os:")
        .append(System.getProperty("os.name"))
        .append(' ')
        .append(System.getProperty("os.version"))
        .append(' ')
        .append(System.getProperty("os.arch"))
        .append("\r\n")
        .append("arch_bits:64\r\n")
        .append("java_version:")
        .append(System.getProperty("java.version"))
        .append("\r\n")
        .append("process_id:")
        .append(ProcessHandle.current().pid())
        .append("\r\n")
        .append("tcp_port:")
        .append(server.port())
        .append("\r\n")
        .append("uptime_in_seconds:")
        .append(uptime)
        .append("\r\n")
        .append("uptime_in_days:")
        .append(uptime / 86400)
        .append("\r\n")
        .append("netty_transport:")
        .append(server.transport)
        .append("\r\n")
        .append("io_threads_active:")
        .append(server.threads)
        .append("\r\nkv4j_workers:")
        .append(server.options.workers())
        .append("\r\nkv4j_loop_mode:")
        .append(commands.loopMode())
        .append("\r\n\r\n");
  }

  private void persistenceSection(StringBuilder sb) {
    sb.append("# Persistence\r\nloading:")
        .append(health.reopening() ? 1 : 0)
        .append("\r\nrdb_last_bgsave_status:")
        .append(health.writeFailure() == null ? "ok" : "err")
        .append("\r\nkv4j_persistent:")
        .append(data.info.has(Feature.PERSISTENT) ? 1 : 0)
        .append("\r\nkv4j_durability:")
        .append(data.info.durability().name().toLowerCase(Locale.ROOT))
        .append("\r\n\r\n");
  }

  private void statsSection(StringBuilder sb) {
    sb.append("# Stats\r\ntotal_connections_received:")
        .append(server.totalConnections.sum())
        .append("\r\ntotal_commands_processed:")
        .append(server.totalCommands.sum())
        .append("\r\nkv4j_protocol_errors:")
        .append(server.protocolErrors.sum())
        .append("\r\nrejected_connections:")
        .append(server.rejectedConnections.sum())
        .append("\r\nkv4j_backpressure_pauses:")
        .append(server.backpressurePauses.sum())
        .append("\r\nkv4j_accept_errors:")
        .append(server.acceptErrors.sum())
        .append("\r\nkv4j_security_attacks:")
        .append(server.securityAttacks.sum())
        .append("\r\nkv4j_denied_connections:")
        .append(server.deniedConnections.sum())
        .append("\r\nkv4j_timed_out_clients:")
        .append(server.timedOutClients.sum())
        .append("\r\nkv4j_query_buffer_rejections:")
        .append(server.queryBufferRejections.sum())
        .append("\r\nacl_access_denied_auth:")
        .append(commands.authFailures())
        .append("\r\nkv4j_loop_commands:")
        .append(server.loopCommands.sum())
        .append("\r\nkv4j_loop_handoffs:")
        .append(server.loopHandoffs.sum())
        .append("\r\nkv4j_auth_timeouts:")
        .append(server.authTimeouts.sum())
        .append("\r\n\r\n");
  }

  private void kv4jSection(StringBuilder sb) {
    StoreInfo info = data.info;
    StoreStats st = data.store().stats();
    String failure = health.writeFailure();
    String reopenError = health.lastReopenError();
    sb.append("# kv4j\r\nstore_state:")
        .append(health.state())
        .append("\r\nstore_health:")
        .append(st.health().name().toLowerCase(java.util.Locale.ROOT))
        .append("\r\nstore_problem:")
        .append(st.problem() == null ? "" : oneLine(st.problem()))
        .append("\r\nstore_error:")
        .append(failure == null ? "" : oneLine(failure))
        .append("\r\nstore_write_failures:")
        .append(health.writeFailures())
        .append("\r\nstore_reopens:")
        .append(health.reopens())
        .append("\r\nstore_reopen_interval_seconds:")
        .append(health.reopenIntervalSeconds())
        .append("\r\nstore_last_reopen_error:")
        .append(reopenError == null ? "" : oneLine(reopenError))
        .append("\r\nshared_store_transactions:")
        .append(data.shared ? 1 : 0)
        .append("\r\ntransaction_reruns:")
        .append(shared.reruns())
        .append("\r\nflushall_async_in_progress:")
        .append(data.flushing() != null ? 1 : 0)
        .append("\r\nworkers:")
        .append(server.options.workers())
        .append("\r\ntls:")
        .append(server.tls() ? 1 : 0)
        .append("\r\nengine:")
        .append(info.engine())
        .append("\r\nlocation:")
        .append(info.location())
        .append("\r\nfeatures:")
        .append(info.features().toString().replace(" ", ""))
        .append("\r\nmax_key_size:")
        .append(info.limits().maxKeySize())
        .append("\r\nmax_value_size:")
        .append(info.limits().maxValueSize())
        .append("\r\nkey_count_exact:")
        .append(st.keyCountExact() ? 1 : 0)
        .append("\r\ndisk_bytes:")
        .append(st.diskBytes())
        .append("\r\n\r\n");
  }

  private void keyspaceSection(StringBuilder sb) {
    sb.append("# Keyspace\r\n");
    long keys = data.flushing() != null ? 0 : data.store().stats().keyCount();
    if (keys > 0) {
      sb.append("db0:keys=").append(keys).append(",expires=0,avg_ttl=0\r\n");
    }
    if (data.keyspaces) {
      for (int db : data.existingDatabases()) {
        long n = data.database(db).stats().keyCount();
        if (n > 0) {
          sb.append("db").append(db).append(":keys=").append(n);
          sb.append(",expires=0,avg_ttl=0\r\n");
        }
      }
    }
  }

  private static String oneLine(String m) {
    return m.replace('\r', ' ').replace('\n', ' ');
  }

  // ---- COMMAND ----

  void command(Session s, Request r, ByteBuf out) {
    List<Command> all = commands.all();
    if (r.count() == 1) {
      Reply.arrayHeader(out, all.size());
      for (Command c : all) {
        commandInfo(c, s, out);
      }
    } else if (r.is(1, "COUNT") && r.count() == 2) {
      Reply.integer(out, all.size());
    } else if (r.is(1, "LIST")) {
      Reply.arrayHeader(out, all.size());
      for (Command c : all) {
        Reply.bulk(out, c.name.toLowerCase(Locale.ROOT));
      }
    } else if (r.is(1, "INFO")) {
      if (r.count() == 2) {
        Reply.arrayHeader(out, all.size());
        for (Command c : all) {
          commandInfo(c, s, out);
        }
        return;
      }
      Reply.arrayHeader(out, r.count() - 2);
      for (int i = 2; i < r.count(); i++) {
        Command c = commands.named(r.string(i));
        if (c == null) {
          Reply.nil(out, s.resp3);
        } else {
          commandInfo(c, s, out);
        }
      }
    } else if (r.is(1, "DOCS")) {
      // No documentation is served; clients fall back to their built-in help.
      Reply.mapHeader(out, 0, s.resp3);
    } else {
      throw new CommandException("ERR unknown subcommand '" + r.string(1) + "'. Try COMMAND HELP.");
    }
  }

  private static void commandInfo(Command c, Session s, ByteBuf out) {
    Reply.arrayHeader(out, 10);
    Reply.bulk(out, c.name.toLowerCase(Locale.ROOT));
    Reply.integer(out, c.arity);
    Reply.setHeader(out, c.flags.length, s.resp3);
    for (String f : c.flags) {
      Reply.simple(out, f);
    }
    Reply.integer(out, c.firstKey);
    Reply.integer(out, c.lastKey);
    Reply.integer(out, c.step);
    Reply.setHeader(out, 0, s.resp3); // ACL categories
    Reply.setHeader(out, 0, s.resp3); // tips
    Reply.arrayHeader(out, 0); // key specs
    Reply.arrayHeader(out, 0); // subcommands
  }

  // ---- CONFIG ----

  void config(Session s, Request r, ByteBuf out) {
    if (r.is(1, "GET")) {
      Map<String, String> known = configValues();
      Map<String, String> hits = new TreeMap<>();
      for (int i = 2; i < r.count(); i++) {
        Glob g = new Glob(r.string(i).toLowerCase(Locale.ROOT).getBytes(StandardCharsets.UTF_8));
        known.forEach(
            (k, v) -> {
              if (g.matches(k.getBytes(StandardCharsets.UTF_8))) {
                hits.put(k, v);
              }
            });
      }
      Reply.mapHeader(out, hits.size(), s.resp3);
      hits.forEach(
          (k, v) -> {
            Reply.bulk(out, k);
            Reply.bulk(out, v);
          });
    } else if (r.is(1, "RESETSTAT")) {
      Reply.ok(out);
    } else if (r.is(1, "SET")) {
      throw new CommandException("ERR CONFIG SET is not supported by kv4j-server");
    } else {
      throw new CommandException("ERR unknown subcommand '" + r.string(1) + "'. Try CONFIG HELP.");
    }
  }

  /** The settings CONFIG GET reports, by Redis's names. */
  private Map<String, String> configValues() {
    Map<String, String> known = new TreeMap<>();
    known.put("save", "");
    known.put("appendonly", "no");
    known.put("databases", data.keyspaces ? Integer.toString(Dataset.DATABASES) : "1");
    known.put("maxmemory", "0");
    known.put("port", Integer.toString(server.port()));
    known.put("proto-max-bulk-len", Long.toString(server.options.maxBulkBytes()));
    known.put("io-threads", Integer.toString(server.threads));
    known.put("maxclients", Integer.toString(server.maxClients));
    known.put("timeout", Integer.toString(server.options.idleTimeoutSeconds()));
    known.put("protected-mode", server.options.protectedMode() ? "yes" : "no");
    known.put("bind", server.options.bind());
    known.put("requirepass", ""); // Redis shows it; kv4j-server never echoes a password
    known.put("client-query-buffer-limit", Long.toString(server.options.clientQueryBufferLimit()));
    return known;
  }
}
