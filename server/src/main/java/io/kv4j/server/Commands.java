package io.kv4j.server;

import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreException;
import io.kv4j.StoreIOException;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The command table and its dispatcher over one {@link Store}: looks a request's command up, checks
 * arity, authentication and permissions, queues it inside MULTI, runs it and turns its failures
 * into error replies. The commands themselves live in one class per family ({@link StringCommands},
 * {@link KeyCommands}, {@link FlushCommands}, {@link TransactionCommands}, {@link ServerCommands},
 * {@link ConnectionCommands}); what they share is in {@link Dataset} (reads and writes) and {@link
 * StoreHealth} (failed writes and reopening).
 */
final class Commands {
  private final RespServer server;
  private final Dataset data;
  private final StoreHealth health;
  private final ConnectionCommands connection;
  private final FlushCommands flush;
  private final SharedStoreTransaction shared;
  private final List<Command> all = new ArrayList<>();
  private final Command[] table = new Command[256];

  /** What {@link #execute} did. */
  static final int DONE = 0;

  static final int QUIT = 1;

  /** Nothing: the command must not run on an event loop; run it again on a worker. */
  static final int ELSEWHERE = 2;

  /**
   * Nothing: the connection's kept SETs must be written first ({@link #submitPending}); run the
   * request again once they are.
   */
  static final int WAIT = 3;

  /**
   * Commands that never touch the store and do bounded work: they may run on an event loop whenever
   * reads may.
   */
  private static final Set<String> LOOP_CONNECTION =
      Set.of(
          "PING", "ECHO", "QUIT", "HELLO", "AUTH", "CLIENT", "TIME", "MULTI", "DISCARD", "UNWATCH",
          "RESET", "ACL");

  /** Reads of one key or of the keys a request names. */
  private static final Set<String> LOOP_READS =
      Set.of("GET", "MGET", "EXISTS", "TYPE", "STRLEN", "GETRANGE");

  /**
   * Writes of the keys a request names, no scan and no transaction: on an event loop they first
   * take their keys' stripe locks without waiting (see {@link #execute}).
   */
  private static final Set<String> LOOP_WRITES =
      Set.of(
          "SET",
          "SETNX",
          "GETSET",
          "GETDEL",
          "SETRANGE",
          "DEL",
          "UNLINK",
          "MSET",
          "APPEND",
          "INCR",
          "DECR",
          "INCRBY",
          "DECRBY",
          "INCRBYFLOAT");

  /** Whether the engine's reads and its writes, respectively, may run on an event loop. */
  private final boolean loopReads;

  private final boolean loopWrites;

  /** Whether plain SETs run by workers are written in batches (see {@link #keep}). */
  private final boolean coalesce;

  /** Where event loops hand plain SETs of database 0 when writes block (SYNC); else null. */
  private final SetCommitter committer;

  private Command set;

  Commands(Store store, RespServer server, Supplier<Store> reopener, Writers writers) {
    this.server = server;
    EngineBlocking blocking = EngineBlocking.of(store, server.options.loopCommands());
    this.loopReads = server.workers != null && blocking.readsNeverBlock();
    this.loopWrites = server.workers != null && blocking.writesNeverBlock();
    this.data = new Dataset(store, writers);
    this.coalesce = data.atomicBatch;
    this.committer =
        coalesce && server.workers != null && blocking.setsToCommitter()
            ? new SetCommitter(this::writeTogether)
            : null;
    this.health = new StoreHealth(data, reopener, server.options.reopenIntervalSeconds());
    this.connection = new ConnectionCommands(data, server.options);
    this.flush = new FlushCommands(data, health);
    this.shared = new SharedStoreTransaction(data, health::writable);
    register(
        new StringCommands(data),
        new KeyCommands(data),
        new TransactionCommands(data, health, this, shared),
        new ServerCommands(server, data, health, this, shared));
  }

  /** The command table, in the order COMMAND lists it. */
  private void register(
      StringCommands str, KeyCommands keys, TransactionCommands tx, ServerCommands srv) {
    ConnectionCommands conn = connection;
    add("PING", -1, "fast", 0, 0, 0, conn::ping);
    add("ECHO", 2, "fast", 0, 0, 0, (s, r, out) -> r.writeBulk(1, out));
    add("GET", 2, "readonly fast", 1, 1, 1, str::get);
    add("SET", -3, "write denyoom", 1, 1, 1, str::set);
    add("SETNX", 3, "write denyoom fast", 1, 1, 1, str::setnx);
    add("GETSET", 3, "write denyoom fast", 1, 1, 1, str::getset);
    add("GETDEL", 2, "write fast", 1, 1, 1, str::getdel);
    add("GETRANGE", 4, "readonly", 1, 1, 1, str::getrange);
    add("SETRANGE", 4, "write denyoom", 1, 1, 1, str::setrange);
    add("DEL", -2, "write", 1, -1, 1, keys::del);
    add("UNLINK", -2, "write fast", 1, -1, 1, keys::del);
    add("EXISTS", -2, "readonly fast", 1, -1, 1, keys::exists);
    add("TYPE", 2, "readonly fast", 1, 1, 1, keys::type);
    add("MGET", -2, "readonly fast", 1, -1, 1, str::mget);
    add("MSET", -3, "write denyoom", 1, -1, 2, (s, r, out) -> str.mset(s, r, out, false));
    add("MSETNX", -3, "write denyoom", 1, -1, 2, (s, r, out) -> str.mset(s, r, out, true));
    add("STRLEN", 2, "readonly fast", 1, 1, 1, str::strlen);
    add("APPEND", 3, "write denyoom fast", 1, 1, 1, str::append);
    add("INCR", 2, "write denyoom fast", 1, 1, 1, (s, r, out) -> str.incrBy(s, r, out, 1));
    add("DECR", 2, "write denyoom fast", 1, 1, 1, (s, r, out) -> str.incrBy(s, r, out, -1));
    add(
        "INCRBY",
        3,
        "write denyoom fast",
        1,
        1,
        1,
        (s, r, o) -> str.incrBy(s, r, o, r.longValue(2)));
    add("DECRBY", 3, "write denyoom fast", 1, 1, 1, str::decrby);
    add("INCRBYFLOAT", 3, "write denyoom fast", 1, 1, 1, str::incrbyfloat);
    add("RENAME", 3, "write", 1, 2, 1, (s, r, out) -> keys.rename(s, r, out, false));
    add("RENAMENX", 3, "write fast", 1, 2, 1, (s, r, out) -> keys.rename(s, r, out, true));
    add("COPY", -3, "write denyoom", 1, 2, 1, keys::copy);
    add("SCAN", -2, "readonly", 0, 0, 0, keys::scan);
    add("KEYS", 2, "readonly", 0, 0, 0, keys::keys);
    add("RANDOMKEY", 1, "readonly", 0, 0, 0, keys::randomkey);
    add("DBSIZE", 1, "readonly fast", 0, 0, 0, keys::dbsize);
    add("FLUSHDB", -1, "write no-multi", 0, 0, 0, flush::flush);
    add("FLUSHALL", -1, "write no-multi", 0, 0, 0, flush::flush);
    add("SAVE", 1, "admin", 0, 0, 0, srv::save);
    add("TIME", 1, "random loading stale fast", 0, 0, 0, srv::time);
    add("INFO", -1, "loading stale", 0, 0, 0, srv::info);
    add("CLIENT", -2, "admin noscript loading stale", 0, 0, 0, conn::client);
    add("COMMAND", -1, "loading stale", 0, 0, 0, srv::command);
    add("CONFIG", -2, "admin noscript loading stale", 0, 0, 0, srv::config);
    add("SELECT", 2, "loading stale fast no-multi", 0, 0, 0, conn::select);
    add("HELLO", -1, "noscript loading stale fast no-auth", 0, 0, 0, conn::hello);
    add("AUTH", -2, "noscript loading stale fast no-auth", 0, 0, 0, conn::auth);
    add("ACL", -2, "admin noscript loading stale", 0, 0, 0, conn::acl);
    add("MULTI", 1, "noscript loading stale fast", 0, 0, 0, tx::multi);
    add("EXEC", 1, "noscript loading stale", 0, 0, 0, tx::exec);
    add("DISCARD", 1, "noscript loading stale fast", 0, 0, 0, tx::discard);
    add("WATCH", -2, "noscript loading stale fast", 1, -1, 1, tx::watch);
    add("UNWATCH", 1, "noscript loading stale fast", 0, 0, 0, tx::unwatch);
    add("RESET", 1, "noscript loading stale fast no-auth", 0, 0, 0, conn::reset);
    add("QUIT", -1, "fast no-auth", 0, 0, 0, (s, r, out) -> Reply.ok(out));
  }

  private void add(
      String name, int arity, String flags, int first, int last, int step, Command.Handler h) {
    boolean loop =
        (loopReads && (LOOP_CONNECTION.contains(name) || LOOP_READS.contains(name)))
            || (loopWrites && LOOP_WRITES.contains(name));
    Command c = new Command(name, arity, flags, first, last, step, h, loop);
    if (name.equals("SET")) {
      set = c;
    }
    all.add(c);
    int slot = slot(name);
    while (table[slot] != null) {
      slot = (slot + 1) & (table.length - 1);
    }
    table[slot] = c;
  }

  private int slot(String upper) {
    int h = 0;
    for (int i = 0; i < upper.length(); i++) {
      h = h * 31 + upper.charAt(i);
    }
    return (h ^ (h >>> 7)) & (table.length - 1);
  }

  /** The request's command, found without allocating (names are ASCII, case-insensitive). */
  private Command lookup(Request r) {
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
    for (Command c = table[h]; c != null; c = table[h = (h + 1) & (table.length - 1)]) {
      if (r.is(0, c.name)) {
        return c;
      }
    }
    return null;
  }

  /** The command named {@code name} (any case), or null. */
  Command named(String name) {
    for (Command c : all) {
      if (c.name.equalsIgnoreCase(name)) {
        return c;
      }
    }
    return null;
  }

  /** Every command, in table order. */
  List<Command> all() {
    return Collections.unmodifiableList(all);
  }

  /** The data the commands share (tests hold its stripe locks). */
  Dataset data() {
    return data;
  }

  /** The store being served now (it changes when a failed store is reopened). */
  Store store() {
    return data.store();
  }

  /** No argument can be longer than the longest key or value the engine takes. */
  long maxArgumentBytes() {
    return Math.max(data.info.limits().maxKeySize(), data.info.limits().maxValueSize());
  }

  boolean defaultUserNeedsPassword() {
    return connection.defaultUserNeedsPassword();
  }

  /** Failed AUTH attempts since the server started. */
  long authFailures() {
    return connection.authFailures.count();
  }

  /** A connection closed: forget its transaction. */
  void disconnected(Session s) {
    s.endMulti();
  }

  /** Stops the background threads; does not close the store. */
  void close() {
    if (committer != null) {
      committer.close();
    }
    flush.close();
    health.close();
  }

  // ---- dispatch ----

  /** What runs on the event loops: "reads+writes", "reads", or "none". */
  String loopMode() {
    return loopWrites ? "reads+writes" : loopReads ? "reads" : "none";
  }

  /** Whether any command may run on an event loop with this engine (see {@link #execute}). */
  boolean loopEnabled() {
    return loopReads;
  }

  /**
   * Runs one command, writing its reply: {@link #QUIT} when the connection should close, else
   * {@link #DONE}. On an event loop ({@code onLoop}) a command that may block is not run: the
   * answer is {@link #ELSEWHERE}, with nothing written and nothing changed, and the caller runs the
   * request again on a worker. A write takes its keys' stripe locks first, without waiting: when
   * another thread holds one (a transaction, a FLUSHDB) the write is run elsewhere too, so an event
   * loop never waits for a lock.
   */
  int execute(Session s, Request r, ByteBuf out, boolean onLoop) {
    Command c = lookup(r);
    if (c != null && keep(c, s, r, onLoop)) {
      PendingSets p = s.pending;
      if (!onLoop && p.full()) {
        flushPending(s, out);
      }
      return DONE;
    }
    if (onLoop && s.pending != null && !s.pending.keys.isEmpty()) {
      return WAIT; // their replies come before this request's
    }
    flushPending(s, out); // their replies come before this request's
    if (c == null) {
      unknown(r, out);
      flagTransaction(s);
      return DONE;
    }
    if (!s.authenticated && !c.noAuth) {
      Reply.error(out, "NOAUTH Authentication required.");
      return DONE;
    }
    int n = r.count();
    if (c.arity > 0 ? n != c.arity : n < -c.arity) {
      Reply.error(out, "ERR wrong number of arguments for '" + r.name() + "' command");
      flagTransaction(s);
      return DONE;
    }
    if (c.write && s.user != null && s.user.readOnly()) {
      Reply.error(
          out,
          "NOPERM User "
              + s.user.name()
              + " has no permissions to run the '"
              + c.name.toLowerCase(Locale.ROOT)
              + "' command");
      flagTransaction(s);
      return DONE;
    }
    if (s.queued != null && !c.transactionControl) {
      queue(c, s, r, out);
      return DONE;
    }
    if (onLoop) {
      if (!c.loop || !data.isOpen(s.db)) {
        return ELSEWHERE;
      }
      if (c.write) {
        int held = lockKeys(c, s, r);
        if (held < 0) {
          return ELSEWHERE;
        }
        s.keysLocked = true;
        try {
          run(c, s, r, out);
        } finally {
          s.keysLocked = false;
          data.locks.unlock(s.stripes, held);
        }
        return DONE;
      }
    }
    run(c, s, r, out);
    return c.quit ? QUIT : DONE;
  }

  /**
   * Takes the stripe locks of every key {@code r} names, without waiting; the number of distinct
   * stripes held (in {@code s.stripes}), or -1 with none held when one is taken by another thread.
   * The command's own locking then re-enters them.
   */
  private int lockKeys(Command c, Session s, Request r) {
    int n = r.count();
    int last = c.lastKey < 0 ? n + c.lastKey : c.lastKey;
    int count = 0;
    for (int i = c.firstKey; c.firstKey > 0 && i <= last && i < n; i += c.step) {
      if (count == s.stripes.length) {
        s.stripes = java.util.Arrays.copyOf(s.stripes, count * 2);
      }
      s.stripes[count++] = data.locks.stripeOfHash(r.hash(i));
    }
    return data.locks.tryLockAll(s.stripes, count);
  }

  /**
   * Inside MULTI: keeps a copy of the request for EXEC, or refuses a command MULTI cannot run. The
   * queue is input waiting to run, so its memory is charged like buffered input: to this client's
   * {@code client-query-buffer-limit} (with its input buffer) and to the server-wide {@code
   * total-query-buffer-limit}. A command that would pass either is refused with an error and the
   * whole transaction is discarded at once (its memory freed; EXEC answers EXECABORT), as Redis
   * flags a transaction whose command it refused. Once a transaction is doomed, later commands are
   * answered QUEUED but not kept (Redis does the same: no memory for a transaction that cannot
   * run).
   */
  private void queue(Command c, Session s, Request r, ByteBuf out) {
    if (c.noMulti) {
      Reply.error(
          out,
          "ERR "
              + c.name
              + " is not supported inside MULTI by kv4j-server ("
              + (c.name.equals("SELECT")
                  ? "a transaction runs in one database"
                  : "it has no keys to lock")
              + ")");
      s.abortQueue();
      return;
    }
    if (s.queueFailed) {
      Reply.simple(out, "QUEUED");
      return;
    }
    long cost = queuedCost(r);
    long client = server.options.clientQueryBufferLimit();
    if (s.queuedBytes + s.inputBytes + cost > client) {
      refuseQueued(
          s,
          out,
          "ERR transaction discarded: its queued commands would pass this client's limit of "
              + client
              + " bytes (client-query-buffer-limit)");
      return;
    }
    long total = server.options.totalQueryBufferLimit();
    if (server.bufferedBytes.get() + cost > total) {
      refuseQueued(
          s,
          out,
          "ERR transaction discarded: its queued commands would pass the server's limit of "
              + total
              + " bytes for all clients' input (total-query-buffer-limit)");
      return;
    }
    byte[][] args = new byte[r.count()][];
    for (int i = 0; i < args.length; i++) {
      args[i] = r.bytes(i);
    }
    s.chargeQueue(cost);
    s.queued.add(args);
    Reply.simple(out, "QUEUED");
  }

  private void refuseQueued(Session s, ByteBuf out, String message) {
    server.queryBufferRejections.increment();
    s.abortQueue();
    Reply.error(out, message);
  }

  /**
   * The heap a queued copy of {@code r} takes: one array of references, one byte array per argument
   * (16-byte headers, 8-byte alignment) and the list's slot.
   */
  static long queuedCost(Request r) {
    long cost = 16 + 8L * r.count() + 8;
    for (int i = 0; i < r.count(); i++) {
      cost += 16 + ((r.length(i) + 7L) & ~7L);
    }
    return cost;
  }

  private static void flagTransaction(Session s) {
    if (s.queued != null) {
      s.abortQueue();
    }
  }

  /** Runs a command whose name, arity and permissions were checked. */
  void run(Command c, Session s, Request r, ByteBuf out) {
    int mark = out.writerIndex();
    try {
      if (c.write) {
        health.checkWritable();
      }
      if (c.readsOtherKeys && data.shared && s.overlay == null) {
        // Another server may write the key read between the read and this command's write.
        shared.run(s, null, out, () -> c.handler.run(s, r, out));
      } else {
        c.handler.run(s, r, out);
      }
    } catch (RuntimeException e) {
      out.writerIndex(mark);
      Reply.error(out, errorText(c, e));
    }
  }

  /** The error reply (without the leading '-') for what a command threw. */
  private String errorText(Command c, RuntimeException e) {
    if (e instanceof CommandException) {
      return e.getMessage();
    } else if (e instanceof IllegalArgumentException) {
      return "ERR " + e.getMessage();
    } else if (e instanceof StoreClosedException) {
      return health.reopening()
          ? "LOADING kv4j store is being reopened after a write failure"
          : "ERR store closed: " + e.getMessage();
    } else if (e instanceof StoreIOException io) {
      return c.write
          ? StoreHealth.misconf(health.failed(io))
          : "ERR engine error: " + e.getMessage();
    } else if (e instanceof StoreException) {
      return "ERR engine error: " + e.getMessage();
    } else if (e instanceof UnsupportedOperationException) {
      return data.info.readOnly()
          ? "READONLY You can't write against a read only kv4j store"
          : "ERR " + e.getMessage();
    }
    return "ERR internal error: " + e;
  }

  // ---- plain SETs of a pipeline, written together ----

  /** Most SETs, and most bytes of their keys and values, written as one batch. */
  static final int PENDING_SETS = 256;

  static final long PENDING_BYTES = 4L << 20;

  /**
   * Keeps a plain {@code SET key value} (no option) of a pipeline run by a worker instead of
   * running it, when the engine writes batches atomically: consecutive ones are written as one
   * {@link io.kv4j.WriteBatch} by {@link #flushPending} (under all their keys' stripe locks),
   * before anything else of the connection runs or answers, and at the latest at the end of the
   * read. On a SYNC engine the batch is forced once where each SET would have been forced alone: a
   * connection's pipeline shares its fsyncs as connections share them through the engine's group
   * commit. Each SET is still answered {@code +OK} in its place; an error of the batch answers each
   * of its SETs (none of them was written: the batch is atomic).
   *
   * @return whether the request was kept
   */
  private boolean keep(Command c, Session s, Request r, boolean onLoop) {
    if (!coalesce
        || (onLoop && (committer == null || s.db != 0))
        || c != set
        || r.count() != 3
        || !s.authenticated
        || s.queued != null
        || s.overlay != null
        || (s.user != null && s.user.readOnly())) {
      return false;
    }
    long size = (long) r.length(1) + r.length(2);
    if (!data.fits(r.length(1), r.length(2))) {
      return false; // answered alone, with its own error
    }
    PendingSets p = s.pending;
    if (p == null) {
      p = s.pending = new PendingSets();
    }
    if (onLoop) {
      // Input held until the committer writes it: charged, and run on a worker when over budget.
      long cost = 32 + size;
      if (server.bufferedBytes.addAndGet(cost) > server.options.totalQueryBufferLimit()) {
        server.bufferedBytes.addAndGet(-cost);
        return false;
      }
      p.charged += cost;
    }
    p.keys.add(r.bytes(1));
    p.values.add(r.bytes(2));
    p.bytes += size;
    return true;
  }

  /** Whether SETs kept on an event loop go to the committer (see {@link SetCommitter}). */
  boolean commitsOnLoop() {
    return committer != null;
  }

  /**
   * Hands the SETs kept on an event loop to the committer; {@code done} gets, on the committer's
   * thread, null when they are written or the error text for each; {@code loop} queues the
   * committer's wake-up after the loop's pass.
   */
  void submitPending(Session s, java.util.concurrent.Executor loop, Consumer<String> done) {
    PendingSets p = s.pending;
    s.pending = new PendingSets();
    committer.submit(new SetCommitter.Entry(s, p, done), loop);
  }

  /** The committer's write: every entry's SETs as one batch, under all their keys' locks. */
  private String writeTogether(List<SetCommitter.Entry> entries) {
    List<byte[]> keys = new ArrayList<>();
    List<byte[]> values = new ArrayList<>();
    long charged = 0;
    for (SetCommitter.Entry e : entries) {
      keys.addAll(e.sets().keys);
      values.addAll(e.sets().values);
      charged += e.sets().charged;
    }
    try {
      health.checkWritable();
      int[] held = data.locks.lockAll(keys.toArray(new byte[0][]));
      try {
        data.apply(entries.get(0).session(), keys, values); // all in database 0
      } finally {
        data.locks.unlockAll(held);
      }
      return null;
    } catch (RuntimeException e) {
      return errorText(set, e);
    } finally {
      server.bufferedBytes.addAndGet(-charged);
    }
  }

  /** Writes the SETs kept by {@link #keep} and answers each of them. */
  void flushPending(Session s, ByteBuf out) {
    PendingSets p = s.pending;
    if (p == null || p.keys.isEmpty()) {
      return;
    }
    int n = p.keys.size();
    try {
      health.checkWritable();
      int[] held = data.locks.lockAll(p.keys.toArray(new byte[0][]));
      try {
        data.apply(s, p.keys, p.values);
      } finally {
        data.locks.unlockAll(held);
      }
      for (int i = 0; i < n; i++) {
        Reply.ok(out);
      }
    } catch (RuntimeException e) {
      String error = errorText(set, e);
      for (int i = 0; i < n; i++) {
        Reply.error(out, error);
      }
    } finally {
      p.clear();
    }
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
}
