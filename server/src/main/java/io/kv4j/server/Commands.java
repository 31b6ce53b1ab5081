package io.kv4j.server;

import io.kv4j.Cursor;
import io.kv4j.Entry;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;

/** The command table and the command implementations over one {@link Store}. */
final class Commands {
  static final String REDIS_VERSION = "7.2.0";
  static final String KV4J_VERSION = "0.1.0-SNAPSHOT";

  /** One command implementation. */
  @FunctionalInterface
  interface Impl {
    void run(Session s, Request r, ByteBuf out);
  }

  /** A command with the metadata COMMAND reports. */
  static final class Cmd {
    final String name;
    final int arity;
    final String[] flags;
    final int firstKey;
    final int lastKey;
    final int step;
    final Impl impl;
    final boolean quit;

    Cmd(String name, int arity, String flags, int firstKey, int lastKey, int step, Impl impl) {
      this.name = name;
      this.arity = arity;
      this.flags = flags.isEmpty() ? new String[0] : flags.split(" ");
      this.firstKey = firstKey;
      this.lastKey = lastKey;
      this.step = step;
      this.impl = impl;
      this.quit = name.equals("QUIT");
    }
  }

  private static final int FLUSH_BATCH = 1000;

  private final Store store;
  private final RespServer server;
  private final StoreInfo info;
  private final boolean atomicBatch;
  private final boolean ordered;
  private final KeyLocks locks = new KeyLocks(1024);
  private final ScanCursors cursors = new ScanCursors(100_000);
  private final List<Cmd> all = new ArrayList<>();
  private final Cmd[] table = new Cmd[256];

  Commands(Store store, RespServer server) {
    this.store = store;
    this.server = server;
    this.info = store.info();
    this.atomicBatch = info.has(Feature.ATOMIC_BATCH);
    this.ordered = info.has(Feature.ORDERED_SCAN);
    add("PING", -1, "fast", 0, 0, 0, this::ping);
    add("ECHO", 2, "fast", 0, 0, 0, (s, r, out) -> r.writeBulk(1, out));
    add("GET", 2, "readonly fast", 1, 1, 1, this::get);
    add("SET", -3, "write denyoom", 1, 1, 1, this::set);
    add("SETNX", 3, "write denyoom fast", 1, 1, 1, this::setnx);
    add("GETSET", 3, "write denyoom fast", 1, 1, 1, this::getset);
    add("GETDEL", 2, "write fast", 1, 1, 1, this::getdel);
    add("DEL", -2, "write", 1, -1, 1, this::del);
    add("UNLINK", -2, "write fast", 1, -1, 1, this::del);
    add("EXISTS", -2, "readonly fast", 1, -1, 1, this::exists);
    add("TYPE", 2, "readonly fast", 1, 1, 1, this::type);
    add("MGET", -2, "readonly fast", 1, -1, 1, this::mget);
    add("MSET", -3, "write denyoom", 1, -1, 2, (s, r, out) -> mset(r, out, false));
    add("MSETNX", -3, "write denyoom", 1, -1, 2, (s, r, out) -> mset(r, out, true));
    add("STRLEN", 2, "readonly fast", 1, 1, 1, this::strlen);
    add("APPEND", 3, "write denyoom fast", 1, 1, 1, this::append);
    add("INCR", 2, "write denyoom fast", 1, 1, 1, (s, r, out) -> incrBy(r, out, 1));
    add("DECR", 2, "write denyoom fast", 1, 1, 1, (s, r, out) -> incrBy(r, out, -1));
    add("INCRBY", 3, "write denyoom fast", 1, 1, 1, (s, r, out) -> incrBy(r, out, r.longValue(2)));
    add("DECRBY", 3, "write denyoom fast", 1, 1, 1, this::decrby);
    add("SCAN", -2, "readonly", 0, 0, 0, this::scan);
    add("KEYS", 2, "readonly", 0, 0, 0, this::keys);
    add("DBSIZE", 1, "readonly fast", 0, 0, 0, this::dbsize);
    add("FLUSHDB", -1, "write", 0, 0, 0, this::flushdb);
    add("FLUSHALL", -1, "write", 0, 0, 0, this::flushdb);
    add("SAVE", 1, "admin", 0, 0, 0, this::save);
    add("INFO", -1, "loading stale", 0, 0, 0, this::info);
    add("CLIENT", -2, "admin noscript loading stale", 0, 0, 0, this::client);
    add("COMMAND", -1, "loading stale", 0, 0, 0, this::command);
    add("CONFIG", -2, "admin noscript loading stale", 0, 0, 0, this::config);
    add("SELECT", 2, "loading stale fast", 0, 0, 0, this::select);
    add("HELLO", -1, "noscript loading stale fast", 0, 0, 0, this::hello);
    add("AUTH", -2, "noscript loading stale fast", 0, 0, 0, this::auth);
    add("QUIT", -1, "fast", 0, 0, 0, (s, r, out) -> Reply.ok(out));
  }

  private void add(String name, int arity, String flags, int first, int last, int step, Impl i) {
    Cmd c = new Cmd(name, arity, flags, first, last, step, i);
    all.add(c);
    int h = slot(name);
    while (table[h] != null) {
      h = (h + 1) & (table.length - 1);
    }
    table[h] = c;
  }

  private int slot(String upper) {
    int h = 0;
    for (int i = 0; i < upper.length(); i++) {
      h = h * 31 + upper.charAt(i);
    }
    return (h ^ (h >>> 7)) & (table.length - 1);
  }

  private Cmd lookup(Request r) {
    int n = r.length(0);
    if (n == 0 || n > 16) {
      return null;
    }
    int h = 0;
    for (int i = 0; i < n; i++) {
      int c = r.byteAt(0, i);
      if (c >= 'a' && c <= 'z') {
        c -= 32;
      }
      h = h * 31 + c;
    }
    h = (h ^ (h >>> 7)) & (table.length - 1);
    for (Cmd c = table[h]; c != null; c = table[h = (h + 1) & (table.length - 1)]) {
      if (r.is(0, c.name)) {
        return c;
      }
    }
    return null;
  }

  int count() {
    return all.size();
  }

  /** Runs one command, writing its reply; returns true when the connection should close. */
  boolean execute(Session s, Request r, ByteBuf out) {
    Cmd c = lookup(r);
    if (c == null) {
      unknown(r, out);
      return false;
    }
    int n = r.count();
    if (c.arity > 0 ? n != c.arity : n < -c.arity) {
      Reply.error(out, "ERR wrong number of arguments for '" + r.name() + "' command");
      return false;
    }
    int mark = out.writerIndex();
    try {
      c.impl.run(s, r, out);
    } catch (CommandException e) {
      out.writerIndex(mark);
      Reply.error(out, e.getMessage());
    } catch (IllegalArgumentException e) {
      out.writerIndex(mark);
      Reply.error(out, "ERR " + e.getMessage());
    } catch (StoreClosedException e) {
      out.writerIndex(mark);
      Reply.error(out, "ERR store closed: " + e.getMessage());
    } catch (StoreException e) {
      out.writerIndex(mark);
      Reply.error(out, "ERR engine error: " + e.getMessage());
    } catch (RuntimeException e) {
      out.writerIndex(mark);
      Reply.error(out, "ERR internal error: " + e);
    }
    return c.quit;
  }

  private static void unknown(Request r, ByteBuf out) {
    StringBuilder sb =
        new StringBuilder("ERR unknown command '")
            .append(clip(r.string(0)))
            .append("', with args beginning with: ");
    for (int i = 1; i < r.count() && i < 32; i++) {
      sb.append('\'').append(clip(r.string(i))).append("' ");
    }
    Reply.error(out, sb.toString());
  }

  private static String clip(String s) {
    return s.length() > 128 ? s.substring(0, 128) : s;
  }

  private static CommandException syntax() {
    return new CommandException("ERR syntax error");
  }

  // ---- strings ----

  private void ping(Session s, Request r, ByteBuf out) {
    if (r.count() > 2) {
      throw new CommandException("ERR wrong number of arguments for 'ping' command");
    }
    if (r.count() == 2) {
      r.writeBulk(1, out);
    } else {
      out.writeBytes(Reply.PONG);
    }
  }

  private void get(Session s, Request r, ByteBuf out) {
    Reply.bulkOrNil(out, store.get(r.bytes(1)), s.resp3);
  }

  private void set(Session s, Request r, ByteBuf out) {
    boolean nx = false;
    boolean xx = false;
    boolean get = false;
    for (int i = 3; i < r.count(); i++) {
      if (r.is(i, "NX")) {
        nx = true;
      } else if (r.is(i, "XX")) {
        xx = true;
      } else if (r.is(i, "GET")) {
        get = true;
      } else if (r.is(i, "KEEPTTL")) {
        continue; // keys never expire, so there is no TTL to keep or lose
      } else if (r.is(i, "EX") || r.is(i, "PX") || r.is(i, "EXAT") || r.is(i, "PXAT")) {
        throw noExpiry(r.string(i));
      } else {
        throw syntax();
      }
    }
    if (nx && xx) {
      throw syntax();
    }
    byte[] key = r.bytes(1);
    byte[] value = r.bytes(2);
    ReentrantLock l = locks.lockFor(key);
    try {
      if (!nx && !xx && !get) {
        store.put(key, value);
        Reply.ok(out);
        return;
      }
      byte[] old = (nx || xx || get) ? store.get(key) : null;
      boolean write = nx ? old == null : !xx || old != null;
      if (write) {
        store.put(key, value);
      }
      if (get) {
        Reply.bulkOrNil(out, old, s.resp3);
      } else if (write) {
        Reply.ok(out);
      } else {
        Reply.nil(out, s.resp3);
      }
    } finally {
      l.unlock();
    }
  }

  private CommandException noExpiry(String option) {
    return new CommandException(
        "ERR SET "
            + option.toUpperCase(Locale.ROOT)
            + " is not supported: kv4j engine '"
            + info.engine()
            + "' has no key expiry");
  }

  private void setnx(Session s, Request r, ByteBuf out) {
    byte[] key = r.bytes(1);
    ReentrantLock l = locks.lockFor(key);
    try {
      if (store.contains(key)) {
        out.writeBytes(Reply.ZERO);
      } else {
        store.put(key, r.bytes(2));
        out.writeBytes(Reply.ONE);
      }
    } finally {
      l.unlock();
    }
  }

  private void getset(Session s, Request r, ByteBuf out) {
    byte[] key = r.bytes(1);
    ReentrantLock l = locks.lockFor(key);
    try {
      byte[] old = store.get(key);
      store.put(key, r.bytes(2));
      Reply.bulkOrNil(out, old, s.resp3);
    } finally {
      l.unlock();
    }
  }

  private void getdel(Session s, Request r, ByteBuf out) {
    byte[] key = r.bytes(1);
    ReentrantLock l = locks.lockFor(key);
    try {
      byte[] old = store.get(key);
      if (old != null) {
        store.delete(key);
      }
      Reply.bulkOrNil(out, old, s.resp3);
    } finally {
      l.unlock();
    }
  }

  private void del(Session s, Request r, ByteBuf out) {
    long n = 0;
    for (int i = 1; i < r.count(); i++) {
      byte[] key = r.bytes(i);
      ReentrantLock l = locks.lockFor(key);
      try {
        if (store.contains(key)) {
          store.delete(key);
          n++;
        }
      } finally {
        l.unlock();
      }
    }
    Reply.integer(out, n);
  }

  private void exists(Session s, Request r, ByteBuf out) {
    long n = 0;
    for (int i = 1; i < r.count(); i++) {
      if (store.contains(r.bytes(i))) {
        n++;
      }
    }
    Reply.integer(out, n);
  }

  private void type(Session s, Request r, ByteBuf out) {
    Reply.simple(out, store.contains(r.bytes(1)) ? "string" : "none");
  }

  private void mget(Session s, Request r, ByteBuf out) {
    Reply.arrayHeader(out, r.count() - 1);
    for (int i = 1; i < r.count(); i++) {
      Reply.bulkOrNil(out, store.get(r.bytes(i)), s.resp3);
    }
  }

  private void mset(Request r, ByteBuf out, boolean nx) {
    if (r.count() % 2 == 0) {
      throw new CommandException(
          "ERR wrong number of arguments for '" + (nx ? "msetnx" : "mset") + "' command");
    }
    int pairs = (r.count() - 1) / 2;
    byte[][] keys = new byte[pairs][];
    for (int i = 0; i < pairs; i++) {
      keys[i] = r.bytes(1 + 2 * i);
    }
    int[] held = locks.lockAll(keys);
    try {
      if (nx) {
        for (byte[] k : keys) {
          if (store.contains(k)) {
            out.writeBytes(Reply.ZERO);
            return;
          }
        }
      }
      if (atomicBatch && pairs > 1) {
        WriteBatch batch = new WriteBatch();
        for (int i = 0; i < pairs; i++) {
          batch.put(keys[i], r.bytes(2 + 2 * i));
        }
        store.write(batch);
      } else {
        for (int i = 0; i < pairs; i++) {
          store.put(keys[i], r.bytes(2 + 2 * i));
        }
      }
    } finally {
      locks.unlockAll(held);
    }
    if (nx) {
      out.writeBytes(Reply.ONE);
    } else {
      Reply.ok(out);
    }
  }

  private void strlen(Session s, Request r, ByteBuf out) {
    byte[] v = store.get(r.bytes(1));
    Reply.integer(out, v == null ? 0 : v.length);
  }

  private void append(Session s, Request r, ByteBuf out) {
    byte[] key = r.bytes(1);
    ReentrantLock l = locks.lockFor(key);
    try {
      byte[] old = store.get(key);
      int add = r.length(2);
      byte[] v;
      if (old == null) {
        v = r.bytes(2);
      } else {
        if ((long) old.length + add > info.limits().maxValueSize()) {
          throw new CommandException(
              "ERR string exceeds maximum allowed size ("
                  + info.limits().maxValueSize()
                  + " bytes for engine '"
                  + info.engine()
                  + "')");
        }
        v = new byte[old.length + add];
        System.arraycopy(old, 0, v, 0, old.length);
        byte[] tail = r.bytes(2);
        System.arraycopy(tail, 0, v, old.length, add);
      }
      store.put(key, v);
      Reply.integer(out, v.length);
    } finally {
      l.unlock();
    }
  }

  private void decrby(Session s, Request r, ByteBuf out) {
    long d = r.longValue(2);
    if (d == Long.MIN_VALUE) {
      throw new CommandException("ERR decrement would overflow");
    }
    incrBy(r, out, -d);
  }

  private void incrBy(Request r, ByteBuf out, long delta) {
    byte[] key = r.bytes(1);
    ReentrantLock l = locks.lockFor(key);
    try {
      byte[] old = store.get(key);
      long current = old == null ? 0 : Numbers.parseStored(old);
      long next;
      try {
        next = Math.addExact(current, delta);
      } catch (ArithmeticException e) {
        throw new CommandException("ERR increment or decrement would overflow");
      }
      store.put(key, Long.toString(next).getBytes(StandardCharsets.US_ASCII));
      Reply.integer(out, next);
    } finally {
      l.unlock();
    }
  }

  // ---- keyspace ----

  private void scan(Session s, Request r, ByteBuf out) {
    byte[] resume = cursors.decode(r.string(1));
    Glob glob = null;
    long count = 10;
    boolean typeMatches = true;
    for (int i = 2; i < r.count(); i++) {
      if (i + 1 >= r.count()) {
        throw syntax();
      }
      if (r.is(i, "MATCH")) {
        glob = new Glob(r.bytes(++i));
      } else if (r.is(i, "COUNT")) {
        count = r.longValue(++i);
        if (count < 1) {
          throw syntax();
        }
      } else if (r.is(i, "TYPE")) {
        typeMatches = r.is(++i, "STRING");
      } else {
        throw syntax();
      }
    }
    KeyRange range = rangeFor(glob);
    List<byte[]> keys = new ArrayList<>();
    String next = ScanCursors.START;
    if (!ordered) {
      // No order to resume in: one pass returns everything.
      collect(range, glob, keys);
    } else {
      if (resume != null) {
        if (!range.belowUpper(resume)) {
          range = null;
        } else if (range.aboveLower(resume)) {
          range = range.gt(resume);
        }
      }
      if (range != null) {
        long examined = 0;
        byte[] last = null;
        boolean more = false;
        try (Cursor c = store.scan(range.limit(Math.min(count, Long.MAX_VALUE - 1) + 1))) {
          while (c.hasNext()) {
            if (examined == count) {
              more = true;
              break;
            }
            Entry e = c.next();
            examined++;
            last = e.key();
            if (glob == null || glob.matches(last)) {
              keys.add(last);
            }
          }
        }
        if (more) {
          next = cursors.encode(last);
        }
      }
    }
    Reply.arrayHeader(out, 2);
    Reply.bulk(out, next);
    if (!typeMatches) {
      keys.clear();
    }
    Reply.arrayHeader(out, keys.size());
    for (byte[] k : keys) {
      Reply.bulk(out, k);
    }
  }

  private static KeyRange rangeFor(Glob glob) {
    if (glob == null) {
      return KeyRange.all();
    }
    byte[] prefix = glob.literalPrefix();
    return prefix.length == 0 ? KeyRange.all() : KeyRange.prefix(prefix);
  }

  private void collect(KeyRange range, Glob glob, List<byte[]> keys) {
    try (Cursor c = store.scan(range)) {
      while (c.hasNext()) {
        byte[] k = c.next().key();
        if (glob == null || glob.matches(k)) {
          keys.add(k);
        }
      }
    }
  }

  private void keys(Session s, Request r, ByteBuf out) {
    Glob glob = new Glob(r.bytes(1));
    List<byte[]> keys = new ArrayList<>();
    collect(rangeFor(glob), glob, keys);
    Reply.arrayHeader(out, keys.size());
    for (byte[] k : keys) {
      Reply.bulk(out, k);
    }
  }

  private void dbsize(Session s, Request r, ByteBuf out) {
    Reply.integer(out, store.stats().keyCount());
  }

  private void flushdb(Session s, Request r, ByteBuf out) {
    if (r.count() > 2 || (r.count() == 2 && !r.is(1, "SYNC") && !r.is(1, "ASYNC"))) {
      throw syntax();
    }
    int[] held = locks.lockEverything();
    try {
      while (true) {
        List<byte[]> keys = new ArrayList<>(FLUSH_BATCH);
        try (Cursor c = store.scan(KeyRange.all().limit(FLUSH_BATCH))) {
          while (c.hasNext()) {
            keys.add(c.next().key());
          }
        }
        if (keys.isEmpty()) {
          break;
        }
        if (atomicBatch) {
          WriteBatch b = new WriteBatch();
          keys.forEach(b::delete);
          store.write(b);
        } else {
          keys.forEach(store::delete);
        }
      }
    } finally {
      locks.unlockAll(held);
    }
    Reply.ok(out);
  }

  private void save(Session s, Request r, ByteBuf out) {
    store.sync();
    Reply.ok(out);
  }

  // ---- server and connection ----

  private void info(Session s, Request r, ByteBuf out) {
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
    Runtime rt = Runtime.getRuntime();
    long uptime = (System.currentTimeMillis() - server.startedMillis) / 1000;
    if (every || wanted.contains("server")) {
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
          .append("\r\n\r\n");
    }
    if (every || wanted.contains("clients")) {
      sb.append("# Clients\r\nconnected_clients:")
          .append(server.connectedClients.get())
          .append("\r\n\r\n");
    }
    if (every || wanted.contains("memory")) {
      sb.append("# Memory\r\nused_memory:")
          .append(rt.totalMemory() - rt.freeMemory())
          .append("\r\nmaxmemory:")
          .append(rt.maxMemory())
          .append("\r\nmaxmemory_policy:noeviction\r\n\r\n");
    }
    if (every || wanted.contains("persistence")) {
      sb.append("# Persistence\r\nloading:0\r\nkv4j_persistent:")
          .append(info.has(Feature.PERSISTENT) ? 1 : 0)
          .append("\r\nkv4j_durability:")
          .append(info.durability().name().toLowerCase(Locale.ROOT))
          .append("\r\n\r\n");
    }
    if (every || wanted.contains("stats")) {
      sb.append("# Stats\r\ntotal_connections_received:")
          .append(server.totalConnections.sum())
          .append("\r\ntotal_commands_processed:")
          .append(server.totalCommands.sum())
          .append("\r\nkv4j_protocol_errors:")
          .append(server.protocolErrors.sum())
          .append("\r\nkv4j_backpressure_pauses:")
          .append(server.backpressurePauses.sum())
          .append("\r\n\r\n");
    }
    if (every || wanted.contains("replication")) {
      sb.append("# Replication\r\nrole:master\r\nconnected_slaves:0\r\n\r\n");
    }
    if (every || wanted.contains("kv4j")) {
      StoreStats st = store.stats();
      sb.append("# kv4j\r\nengine:")
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
    if (every || wanted.contains("keyspace")) {
      sb.append("# Keyspace\r\n");
      long keys = store.stats().keyCount();
      if (keys > 0) {
        sb.append("db0:keys=").append(keys).append(",expires=0,avg_ttl=0\r\n");
      }
    }
    Reply.bulk(out, sb.toString());
  }

  private void client(Session s, Request r, ByteBuf out) {
    if (r.is(1, "SETNAME") && r.count() == 3) {
      String name = r.string(2);
      for (int i = 0; i < name.length(); i++) {
        char c = name.charAt(i);
        if (c < '!' || c > '~') {
          throw new CommandException(
              "ERR Client names cannot contain spaces, newlines or special characters.");
        }
      }
      s.name = name.isEmpty() ? null : name;
      Reply.ok(out);
    } else if (r.is(1, "GETNAME") && r.count() == 2) {
      if (s.name == null) {
        Reply.nil(out, s.resp3);
      } else {
        Reply.bulk(out, s.name);
      }
    } else if (r.is(1, "ID") && r.count() == 2) {
      Reply.integer(out, s.id);
    } else if (r.is(1, "SETINFO") && r.count() == 4) {
      if (r.is(2, "LIB-NAME")) {
        s.libName = r.string(3);
      } else if (r.is(2, "LIB-VER")) {
        s.libVersion = r.string(3);
      } else {
        throw new CommandException("ERR Unrecognized option '" + r.string(2) + "'");
      }
      Reply.ok(out);
    } else if ((r.is(1, "INFO") && r.count() == 2) || (r.is(1, "LIST") && r.count() == 2)) {
      Reply.bulk(out, clientLine(s) + "\n");
    } else if (r.is(1, "NO-EVICT") || r.is(1, "NO-TOUCH")) {
      Reply.ok(out);
    } else {
      throw new CommandException(
          "ERR unknown subcommand or wrong number of arguments for '"
              + r.string(1)
              + "'. Try CLIENT HELP.");
    }
  }

  private String clientLine(Session s) {
    long age = (System.currentTimeMillis() - s.createdMillis) / 1000;
    return "id="
        + s.id
        + " addr="
        + s.remote.replace("/", "")
        + " name="
        + (s.name == null ? "" : s.name)
        + " age="
        + age
        + " db=0 resp="
        + (s.resp3 ? 3 : 2)
        + " lib-name="
        + (s.libName == null ? "" : s.libName)
        + " lib-ver="
        + (s.libVersion == null ? "" : s.libVersion);
  }

  private void command(Session s, Request r, ByteBuf out) {
    if (r.count() == 1) {
      Reply.arrayHeader(out, all.size());
      for (Cmd c : all) {
        commandInfo(c, s, out);
      }
    } else if (r.is(1, "COUNT") && r.count() == 2) {
      Reply.integer(out, all.size());
    } else if (r.is(1, "LIST")) {
      Reply.arrayHeader(out, all.size());
      for (Cmd c : all) {
        Reply.bulk(out, c.name.toLowerCase(Locale.ROOT));
      }
    } else if (r.is(1, "INFO")) {
      if (r.count() == 2) {
        Reply.arrayHeader(out, all.size());
        for (Cmd c : all) {
          commandInfo(c, s, out);
        }
        return;
      }
      Reply.arrayHeader(out, r.count() - 2);
      for (int i = 2; i < r.count(); i++) {
        Cmd c = byName(r.string(i));
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

  private Cmd byName(String name) {
    for (Cmd c : all) {
      if (c.name.equalsIgnoreCase(name)) {
        return c;
      }
    }
    return null;
  }

  private static void commandInfo(Cmd c, Session s, ByteBuf out) {
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

  private void config(Session s, Request r, ByteBuf out) {
    if (r.is(1, "GET")) {
      Map<String, String> known = new TreeMap<>();
      known.put("save", "");
      known.put("appendonly", "no");
      known.put("databases", "1");
      known.put("maxmemory", "0");
      known.put("port", Integer.toString(server.port()));
      known.put("proto-max-bulk-len", Long.toString(server.options.maxBulkBytes()));
      known.put("io-threads", Integer.toString(server.threads));
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

  private void select(Session s, Request r, ByteBuf out) {
    long db;
    try {
      db = r.longValue(1);
    } catch (CommandException e) {
      throw new CommandException("ERR value is not an integer or out of range");
    }
    if (db != 0) {
      throw new CommandException("ERR DB index is out of range (kv4j-server has one database)");
    }
    Reply.ok(out);
  }

  private void hello(Session s, Request r, ByteBuf out) {
    int proto = s.resp3 ? 3 : 2;
    int i = 1;
    if (r.count() > 1) {
      long v;
      try {
        v = r.longValue(1);
      } catch (CommandException e) {
        throw new CommandException("ERR Protocol version is not an integer or out of range");
      }
      if (v != 2 && v != 3) {
        throw new CommandException("NOPROTO unsupported protocol version");
      }
      proto = (int) v;
      i = 2;
    }
    String name = null;
    for (; i < r.count(); i++) {
      if (r.is(i, "AUTH") && i + 2 < r.count()) {
        i += 2; // no users or passwords are configured: every client is the default user
      } else if (r.is(i, "SETNAME") && i + 1 < r.count()) {
        name = r.string(++i);
      } else {
        throw new CommandException("ERR Syntax error in HELLO option '" + r.string(i) + "'");
      }
    }
    if (name != null) {
      s.name = name.isEmpty() ? null : name;
    }
    s.resp3 = proto == 3;
    Reply.mapHeader(out, 7, s.resp3);
    Reply.bulk(out, "server");
    Reply.bulk(out, "redis");
    Reply.bulk(out, "version");
    Reply.bulk(out, REDIS_VERSION);
    Reply.bulk(out, "proto");
    Reply.integer(out, proto);
    Reply.bulk(out, "id");
    Reply.integer(out, s.id);
    Reply.bulk(out, "mode");
    Reply.bulk(out, "standalone");
    Reply.bulk(out, "role");
    Reply.bulk(out, "master");
    Reply.bulk(out, "modules");
    Reply.arrayHeader(out, 0);
  }

  private void auth(Session s, Request r, ByteBuf out) {
    throw new CommandException(
        "ERR AUTH <password> called without any password configured for the default user."
            + " Are you sure your configuration is correct?");
  }
}
