package io.kv4j.server;

import io.kv4j.Cursor;
import io.kv4j.Entry;
import io.kv4j.Feature;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreClosedException;
import io.kv4j.StoreException;
import io.kv4j.StoreIOException;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.netty.buffer.ByteBuf;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The command table and the command implementations over one {@link Store}.
 *
 * <p>Every read goes through {@link #get}/{@link #contains} and every write through {@link #put},
 * {@link #delete} or {@link #apply}: that is where a transaction's overlay, an asynchronous
 * FLUSHALL's hiding of old keys, the WATCH versions and the store's health are handled.
 *
 * <p><b>Store health.</b> A write that fails with {@link StoreIOException} (disk full, EIO) marks
 * the store failed: later writes are refused with {@code -MISCONF} before they reach the engine,
 * reads go on, and {@code INFO} shows {@code kv4j_store_state:failed} with the reason. Every {@code
 * --reopen-interval} seconds the server closes and reopens the store (the engine's recovery decides
 * what is on disk); a reopen that fails is retried and its error shown in INFO. A store opened
 * read-only answers writes with {@code -READONLY}.
 */
final class Commands {
  static final String REDIS_VERSION = "7.2.0";
  static final String KV4J_VERSION = "0.1.0-SNAPSHOT";

  static final String DENIED =
      "-DENIED kv4j-server is running in protected mode because protected mode is enabled and no"
          + " password is set for the default user. In this mode connections are only accepted"
          + " from the loopback interface. If you want to connect from external computers to"
          + " kv4j-server you may adopt one of the following solutions: 1) Set up an authentication"
          + " password for the default user with --requirepass (and use TLS with --tls-cert-file"
          + " and --tls-key-file). 2) If you started the server manually just for testing, restart"
          + " it with the '--protected-mode no' option, however MAKE SURE kv4j-server is not"
          + " publicly accessible from internet if you do so. NOTE: You only need to do one of the"
          + " above things in order for the server to start accepting connections from the"
          + " outside.\r\n";

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
    final boolean write;
    final boolean noAuth;

    /** Runs at once inside MULTI instead of being queued (MULTI, EXEC, DISCARD, WATCH, ...). */
    final boolean transactionControl;

    /** Refused inside MULTI (FLUSHALL and FLUSHDB, which have no keys to lock, and SELECT). */
    final boolean noMulti;

    Cmd(String name, int arity, String flags, int firstKey, int lastKey, int step, Impl impl) {
      this.name = name;
      this.arity = arity;
      this.flags = flags.isEmpty() ? new String[0] : flags.split(" ");
      this.firstKey = firstKey;
      this.lastKey = lastKey;
      this.step = step;
      this.impl = impl;
      this.quit = name.equals("QUIT");
      List<String> f = List.of(this.flags);
      this.write = f.contains("write");
      this.noAuth = f.contains("no-auth");
      this.noMulti = f.contains("no-multi");
      this.transactionControl =
          List.of("MULTI", "EXEC", "DISCARD", "WATCH", "QUIT", "RESET").contains(name);
    }
  }

  private static final int FLUSH_BATCH = 1000;

  /** Databases SELECT accepts where the engine has keyspaces (Redis's default count). */
  static final int DATABASES = 16;

  private static final int VERSION_SLOTS = 1 << 16;

  private final RespServer server;
  private final StoreInfo info;
  private final boolean atomicBatch;
  private final boolean conditional;
  private final boolean ordered;
  private final boolean keyspaces;
  // Handles of the keyspaces "db<n>" serving SELECTed databases n > 0, opened on first SELECT.
  private final Map<Integer, Store> databases = new ConcurrentHashMap<>();
  private final Supplier<Store> reopener;
  private final KeyLocks locks = new KeyLocks(1024);
  private final ScanCursors cursors = new ScanCursors(100_000);
  private final List<Cmd> all = new ArrayList<>();
  private final Cmd[] table = new Cmd[256];
  private final AtomicLongArray versions = new AtomicLongArray(VERSION_SLOTS);
  private final ExecutorService flusher;
  private final ScheduledExecutorService health;

  private volatile Store store;
  private volatile AsyncFlush flushing;
  // Health: the first write failure since the store was (re)opened, or null.
  private volatile String writeFailure;
  private volatile boolean reopening;
  private volatile String lastReopenError;
  private final AtomicLong reopens = new AtomicLong();
  private final AtomicLong writeFailures = new AtomicLong();

  Commands(Store store, RespServer server, Supplier<Store> reopener) {
    this.store = store;
    this.server = server;
    this.reopener = reopener;
    this.info = store.info();
    this.atomicBatch = info.has(Feature.ATOMIC_BATCH);
    this.conditional = info.has(Feature.CONDITIONAL_WRITE);
    this.ordered = info.has(Feature.ORDERED_SCAN);
    this.keyspaces = info.has(Feature.KEYSPACES);
    this.flusher =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "kv4j-flushall-async");
              t.setDaemon(true);
              return t;
            });
    this.health =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "kv4j-store-reopen");
              t.setDaemon(true);
              return t;
            });
    add("PING", -1, "fast", 0, 0, 0, this::ping);
    add("ECHO", 2, "fast", 0, 0, 0, (s, r, out) -> r.writeBulk(1, out));
    add("GET", 2, "readonly fast", 1, 1, 1, this::get);
    add("SET", -3, "write denyoom", 1, 1, 1, this::set);
    add("SETNX", 3, "write denyoom fast", 1, 1, 1, this::setnx);
    add("GETSET", 3, "write denyoom fast", 1, 1, 1, this::getset);
    add("GETDEL", 2, "write fast", 1, 1, 1, this::getdel);
    add("GETRANGE", 4, "readonly", 1, 1, 1, this::getrange);
    add("SETRANGE", 4, "write denyoom", 1, 1, 1, this::setrange);
    add("DEL", -2, "write", 1, -1, 1, this::del);
    add("UNLINK", -2, "write fast", 1, -1, 1, this::del);
    add("EXISTS", -2, "readonly fast", 1, -1, 1, this::exists);
    add("TYPE", 2, "readonly fast", 1, 1, 1, this::type);
    add("MGET", -2, "readonly fast", 1, -1, 1, this::mget);
    add("MSET", -3, "write denyoom", 1, -1, 2, (s, r, out) -> mset(s, r, out, false));
    add("MSETNX", -3, "write denyoom", 1, -1, 2, (s, r, out) -> mset(s, r, out, true));
    add("STRLEN", 2, "readonly fast", 1, 1, 1, this::strlen);
    add("APPEND", 3, "write denyoom fast", 1, 1, 1, this::append);
    add("INCR", 2, "write denyoom fast", 1, 1, 1, (s, r, out) -> incrBy(s, r, out, 1));
    add("DECR", 2, "write denyoom fast", 1, 1, 1, (s, r, out) -> incrBy(s, r, out, -1));
    add(
        "INCRBY",
        3,
        "write denyoom fast",
        1,
        1,
        1,
        (s, r, out) -> incrBy(s, r, out, r.longValue(2)));
    add("DECRBY", 3, "write denyoom fast", 1, 1, 1, this::decrby);
    add("INCRBYFLOAT", 3, "write denyoom fast", 1, 1, 1, this::incrbyfloat);
    add("RENAME", 3, "write", 1, 2, 1, (s, r, out) -> rename(s, r, out, false));
    add("RENAMENX", 3, "write fast", 1, 2, 1, (s, r, out) -> rename(s, r, out, true));
    add("COPY", -3, "write denyoom", 1, 2, 1, this::copy);
    add("SCAN", -2, "readonly", 0, 0, 0, this::scan);
    add("KEYS", 2, "readonly", 0, 0, 0, this::keys);
    add("RANDOMKEY", 1, "readonly", 0, 0, 0, this::randomkey);
    add("DBSIZE", 1, "readonly fast", 0, 0, 0, this::dbsize);
    add("FLUSHDB", -1, "write no-multi", 0, 0, 0, this::flushdb);
    add("FLUSHALL", -1, "write no-multi", 0, 0, 0, this::flushdb);
    add("SAVE", 1, "admin", 0, 0, 0, this::save);
    add("TIME", 1, "random loading stale fast", 0, 0, 0, this::time);
    add("INFO", -1, "loading stale", 0, 0, 0, this::info);
    add("CLIENT", -2, "admin noscript loading stale", 0, 0, 0, this::client);
    add("COMMAND", -1, "loading stale", 0, 0, 0, this::command);
    add("CONFIG", -2, "admin noscript loading stale", 0, 0, 0, this::config);
    add("SELECT", 2, "loading stale fast no-multi", 0, 0, 0, this::select);
    add("HELLO", -1, "noscript loading stale fast no-auth", 0, 0, 0, this::hello);
    add("AUTH", -2, "noscript loading stale fast no-auth", 0, 0, 0, this::auth);
    add("ACL", -2, "admin noscript loading stale", 0, 0, 0, this::acl);
    add("MULTI", 1, "noscript loading stale fast", 0, 0, 0, this::multi);
    add("EXEC", 1, "noscript loading stale", 0, 0, 0, this::exec);
    add("DISCARD", 1, "noscript loading stale fast", 0, 0, 0, this::discard);
    add("WATCH", -2, "noscript loading stale fast", 1, -1, 1, this::watch);
    add("UNWATCH", 1, "noscript loading stale fast", 0, 0, 0, this::unwatch);
    add("RESET", 1, "noscript loading stale fast no-auth", 0, 0, 0, this::reset);
    add("QUIT", -1, "fast no-auth", 0, 0, 0, (s, r, out) -> Reply.ok(out));
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

  /** The store being served now (it changes when a failed store is reopened). */
  Store store() {
    return store;
  }

  /** No argument can be longer than the longest key or value the engine takes. */
  long maxArgumentBytes() {
    return Math.max(info.limits().maxKeySize(), info.limits().maxValueSize());
  }

  boolean defaultUserNeedsPassword() {
    return server.options.requirePassHash() != null;
  }

  /** A connection closed: forget its transaction. */
  void disconnected(Session s) {
    s.endMulti();
  }

  /** Stops the background threads; does not close the store. */
  void close() {
    AsyncFlush f = flushing;
    if (f != null) {
      f.cancelled = true;
    }
    flusher.shutdownNow();
    health.shutdownNow();
  }

  // ---- dispatch ----

  /** Runs one command, writing its reply; returns true when the connection should close. */
  boolean execute(Session s, Request r, ByteBuf out) {
    Cmd c = lookup(r);
    if (c == null) {
      unknown(r, out);
      flagTransaction(s);
      return false;
    }
    if (!s.authenticated && !c.noAuth) {
      Reply.error(out, "NOAUTH Authentication required.");
      return false;
    }
    int n = r.count();
    if (c.arity > 0 ? n != c.arity : n < -c.arity) {
      Reply.error(out, "ERR wrong number of arguments for '" + r.name() + "' command");
      flagTransaction(s);
      return false;
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
      return false;
    }
    if (s.queued != null && !c.transactionControl) {
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
        s.queueFailed = true;
        return false;
      }
      byte[][] args = new byte[n][];
      for (int i = 0; i < n; i++) {
        args[i] = r.bytes(i);
      }
      s.queued.add(args);
      Reply.simple(out, "QUEUED");
      return false;
    }
    run(c, s, r, out);
    return c.quit;
  }

  private static void flagTransaction(Session s) {
    if (s.queued != null) {
      s.queueFailed = true;
    }
  }

  /** Runs a command whose name, arity and permissions were checked. */
  private void run(Cmd c, Session s, Request r, ByteBuf out) {
    int mark = out.writerIndex();
    try {
      if (c.write) {
        checkWritable();
      }
      c.impl.run(s, r, out);
    } catch (CommandException e) {
      out.writerIndex(mark);
      Reply.error(out, e.getMessage());
    } catch (IllegalArgumentException e) {
      out.writerIndex(mark);
      Reply.error(out, "ERR " + e.getMessage());
    } catch (StoreClosedException e) {
      out.writerIndex(mark);
      Reply.error(
          out,
          reopening
              ? "LOADING kv4j store is being reopened after a write failure"
              : "ERR store closed: " + e.getMessage());
    } catch (StoreIOException e) {
      out.writerIndex(mark);
      Reply.error(out, c.write ? misconf(failed(e)) : "ERR engine error: " + e.getMessage());
    } catch (StoreException e) {
      out.writerIndex(mark);
      Reply.error(out, "ERR engine error: " + e.getMessage());
    } catch (UnsupportedOperationException e) {
      out.writerIndex(mark);
      Reply.error(
          out,
          info.readOnly()
              ? "READONLY You can't write against a read only kv4j store"
              : "ERR " + e.getMessage());
    } catch (RuntimeException e) {
      out.writerIndex(mark);
      Reply.error(out, "ERR internal error: " + e);
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

  private static CommandException syntax() {
    return new CommandException("ERR syntax error");
  }

  // ---- store health ----

  private void checkWritable() {
    if (info.readOnly()) {
      throw new CommandException("READONLY You can't write against a read only kv4j store");
    }
    String f = writeFailure;
    if (f != null) {
      throw new CommandException(misconf(f));
    }
    if (reopening) {
      throw new CommandException("LOADING kv4j store is being reopened after a write failure");
    }
  }

  private static String misconf(String failure) {
    return "MISCONF kv4j store failed a write and refuses writes until it is reopened ("
        + failure
        + "). Commands that may modify the data set are disabled; see INFO kv4j.";
  }

  /** Records a write failure (the first since the last reopen) and schedules a reopen. */
  private String failed(StoreIOException e) {
    String m = String.valueOf(e.getMessage());
    synchronized (this) {
      if (writeFailure == null) {
        writeFailure = m;
        writeFailures.incrementAndGet();
        StderrLog.print("kv4j-server: store write failed, writes refused: " + m);
        scheduleReopen();
      }
      return writeFailure;
    }
  }

  private void scheduleReopen() {
    int every = server.options.reopenIntervalSeconds();
    if (reopener == null || every == 0) {
      return;
    }
    try {
      health.schedule(this::reopen, every, TimeUnit.SECONDS);
    } catch (RuntimeException e) {
      // Shut down: the server is closing.
    }
  }

  /**
   * Closes the failed store and opens it again; the engine's recovery decides what is on disk.
   * Commands that reach the store meanwhile get {@code -LOADING}.
   */
  void reopen() {
    synchronized (this) {
      reopening = true;
    }
    try {
      Store old = store;
      try {
        old.close();
      } catch (RuntimeException e) {
        StderrLog.print("kv4j-server: closing the failed store: " + e);
      }
      Store fresh = reopener.get();
      databases.clear(); // the old store closed its keyspace handles
      store = fresh;
      synchronized (this) {
        writeFailure = null;
        lastReopenError = null;
        reopening = false;
      }
      reopens.incrementAndGet();
      StderrLog.print("kv4j-server: store reopened: " + fresh.info().describe());
    } catch (Throwable t) {
      lastReopenError = String.valueOf(t);
      StderrLog.print("kv4j-server: reopening the store failed, retrying: " + t);
      scheduleReopen();
    }
  }

  private String storeState() {
    if (info.readOnly()) {
      return "read-only";
    }
    if (reopening) {
      return "reopening";
    }
    return writeFailure != null ? "failed" : "ok";
  }

  // ---- reads and writes: overlay, async flush, versions ----

  private int versionSlot(byte[] key) {
    int h = Arrays.hashCode(key);
    h ^= h >>> 16;
    h *= 0x45d9f3b;
    h ^= h >>> 16;
    return h & (VERSION_SLOTS - 1);
  }

  private long version(byte[] key) {
    return versions.get(versionSlot(key));
  }

  private void touched(Session s, byte[] key) {
    versions.incrementAndGet(versionSlot(key));
    AsyncFlush f = flushing;
    if (f != null && s.db == 0) {
      f.kept.add(new Key(key));
    }
  }

  private void touchedAll() {
    for (int i = 0; i < VERSION_SLOTS; i++) {
      versions.incrementAndGet(i);
    }
  }

  /**
   * Whether an asynchronous FLUSHALL hides this stored key of database 0 (it existed before the
   * flush). Other databases are flushed synchronously: nothing is hidden there.
   */
  private boolean hidden(Session s, byte[] key) {
    AsyncFlush f = flushing;
    return f != null && s.db == 0 && !f.kept.contains(new Key(key));
  }

  /**
   * The store holding the session's database: the store itself for database 0, else the keyspace
   * {@code db<n>} (opened, and created, by SELECT).
   */
  private Store st(Session s) {
    return s.db == 0 ? store : database(s.db);
  }

  private Store database(int db) {
    Store current = store;
    return databases.computeIfAbsent(db, n -> current.keyspace("db" + n));
  }

  private byte[] get(Session s, byte[] key) {
    Overlay o = s.overlay;
    if (o != null) {
      byte[] v = o.get(key);
      if (v != null) {
        return v == Overlay.DELETED ? null : v;
      }
    }
    if (hidden(s, key)) {
      return null;
    }
    return st(s).get(key);
  }

  private boolean contains(Session s, byte[] key) {
    Overlay o = s.overlay;
    if (o != null) {
      byte[] v = o.get(key);
      if (v != null) {
        return v != Overlay.DELETED;
      }
    }
    return !hidden(s, key) && st(s).contains(key);
  }

  /** A read-modify-write's decision: the new value, {@link #KEEP}, or null to delete the key. */
  interface Change {
    byte[] apply(byte[] old);
  }

  /** Returned by a {@link Change} that leaves the key as it is. Compared by identity. */
  private static final byte[] KEEP = new byte[0];

  /**
   * Read-modify-write of one key (SETNX, SET NX/XX/GET, GETSET, GETDEL, APPEND, SETRANGE, INCR*).
   * This server's writers of the key are serialised by its stripe lock. Where the engine declares
   * CONDITIONAL_WRITE the write is also a compare-and-set against the value read, retried when it
   * changed in between, so two servers (or any other application) sharing one postgres, mysql or
   * redis store lose no update; without it, or inside MULTI (whose overlay commits as one batch
   * under the stripe locks), the stripe lock is all there is, which protects only this server's
   * clients. {@code change} may run more than once and must not write replies.
   *
   * @return the value the change was applied to (null when absent)
   */
  private byte[] update(Session s, byte[] key, Change change) {
    ReentrantLock l = locks.lockFor(key);
    try {
      if (s.overlay != null || !conditional) {
        byte[] old = get(s, key);
        byte[] next = change.apply(old);
        if (next == null) {
          if (old != null) {
            delete(s, key);
          }
        } else if (next != KEEP) {
          put(s, key, next);
        }
        return old;
      }
      Store st = st(s);
      while (true) {
        byte[] stored = st.get(key);
        byte[] old =
            hidden(s, key) ? null : stored; // a key an async FLUSHALL hides reads as absent
        byte[] next = change.apply(old);
        if (next == KEEP) {
          return old;
        }
        boolean done;
        if (stored == null) {
          done = next == null || st.putIfAbsent(key, next);
        } else if (next == null) {
          done = st.delete(key, stored);
        } else {
          done = st.replace(key, stored, next);
        }
        if (done) {
          touched(s, key);
          return old;
        }
        // Another writer of the shared store changed the key since we read it: read again.
      }
    } finally {
      l.unlock();
    }
  }

  /** Writes one key; the caller holds the key's stripe lock. */
  private void put(Session s, byte[] key, byte[] value) {
    Overlay o = s.overlay;
    if (o != null) {
      checkSizes(key, value);
      o.put(key, value);
      return;
    }
    st(s).put(key, value);
    touched(s, key);
  }

  /** Deletes one key; the caller holds the key's stripe lock. */
  private void delete(Session s, byte[] key) {
    Overlay o = s.overlay;
    if (o != null) {
      o.delete(key);
      return;
    }
    st(s).delete(key);
    touched(s, key);
  }

  /**
   * Writes several keys together (value null = delete): one WriteBatch where the engine has
   * ATOMIC_BATCH. The caller holds the keys' stripe locks.
   */
  private void apply(Session s, List<byte[]> keys, List<byte[]> values) {
    Overlay o = s.overlay;
    if (o != null) {
      for (int i = 0; i < keys.size(); i++) {
        if (values.get(i) == null) {
          o.delete(keys.get(i));
        } else {
          checkSizes(keys.get(i), values.get(i));
          o.put(keys.get(i), values.get(i));
        }
      }
      return;
    }
    Store st = st(s);
    if (atomicBatch && keys.size() > 1) {
      WriteBatch b = new WriteBatch();
      for (int i = 0; i < keys.size(); i++) {
        if (values.get(i) == null) {
          b.delete(keys.get(i));
        } else {
          b.put(keys.get(i), values.get(i));
        }
      }
      st.write(b);
    } else {
      for (int i = 0; i < keys.size(); i++) {
        if (values.get(i) == null) {
          st.delete(keys.get(i));
        } else {
          st.put(keys.get(i), values.get(i));
        }
      }
    }
    for (byte[] k : keys) {
      touched(s, k);
    }
  }

  /** Inside a transaction the engine checks sizes only at commit: check them when queued. */
  private void checkSizes(byte[] key, byte[] value) {
    if (key.length == 0 || key.length > info.limits().maxKeySize()) {
      throw new CommandException(
          "ERR key of "
              + key.length
              + " bytes: engine '"
              + info.engine()
              + "' takes 1 to "
              + info.limits().maxKeySize()
              + " bytes");
    }
    if (value.length > info.limits().maxValueSize()) {
      throw tooBig();
    }
  }

  private CommandException tooBig() {
    return new CommandException(
        "ERR string exceeds maximum allowed size ("
            + info.limits().maxValueSize()
            + " bytes for engine '"
            + info.engine()
            + "')");
  }

  // ---- transactions ----

  private void multi(Session s, Request r, ByteBuf out) {
    if (s.queued != null) {
      throw new CommandException("ERR MULTI calls can not be nested");
    }
    s.beginMulti();
    Reply.ok(out);
  }

  private void discard(Session s, Request r, ByteBuf out) {
    if (s.queued == null) {
      throw new CommandException("ERR DISCARD without MULTI");
    }
    s.endMulti();
    Reply.ok(out);
  }

  private void watch(Session s, Request r, ByteBuf out) {
    if (s.queued != null) {
      throw new CommandException("ERR WATCH inside MULTI is not allowed");
    }
    if (s.watched == null) {
      s.watched = new ArrayList<>();
    }
    for (int i = 1; i < r.count(); i++) {
      byte[] key = r.bytes(i);
      ReentrantLock l = locks.lockFor(key);
      try {
        s.watched.add(new Session.Watch(key, version(key)));
      } finally {
        l.unlock();
      }
    }
    Reply.ok(out);
  }

  private void unwatch(Session s, Request r, ByteBuf out) {
    s.watched = null;
    Reply.ok(out);
  }

  /**
   * EXEC: locks the stripes of every key the queued commands and the watches name (so no other
   * write interleaves), checks the watched versions, runs the commands against an overlay, then
   * commits the overlay as one batch. Commands that scan (KEYS, SCAN, DBSIZE, RANDOMKEY) see the
   * store, not the transaction's own pending writes.
   */
  private void exec(Session s, Request r, ByteBuf out) {
    if (s.queued == null) {
      throw new CommandException("ERR EXEC without MULTI");
    }
    List<byte[][]> queued = s.queued;
    List<Session.Watch> watched = s.watched;
    boolean aborted = s.queueFailed;
    s.endMulti();
    if (aborted) {
      throw new CommandException("EXECABORT Transaction discarded because of previous errors.");
    }
    List<byte[]> keys = new ArrayList<>();
    for (byte[][] args : queued) {
      Cmd c = byName(new String(args[0], StandardCharsets.UTF_8));
      int last = c.lastKey < 0 ? args.length + c.lastKey : c.lastKey;
      for (int i = c.firstKey; c.firstKey > 0 && i <= last && i < args.length; i += c.step) {
        keys.add(args[i]);
      }
    }
    if (watched != null) {
      for (Session.Watch w : watched) {
        keys.add(w.key());
      }
    }
    int[] held = locks.lockAll(keys.toArray(new byte[0][]));
    try {
      if (watched != null) {
        for (Session.Watch w : watched) {
          if (version(w.key()) != w.version()) {
            if (s.resp3) {
              Reply.nil(out, true);
            } else {
              out.writeBytes(Reply.NIL_ARRAY2);
            }
            return;
          }
        }
      }
      boolean writes = false;
      for (byte[][] args : queued) {
        writes |= byName(new String(args[0], StandardCharsets.UTF_8)).write;
      }
      if (writes) {
        checkWritable();
      }
      int mark = out.writerIndex();
      Reply.arrayHeader(out, queued.size());
      s.overlay = new Overlay();
      try {
        Request each = new Request();
        for (byte[][] args : queued) {
          each.reset(args);
          run(byName(each.string(0)), s, each, out);
        }
      } finally {
        Overlay o = s.overlay;
        s.overlay = null;
        try {
          commit(s, o);
        } catch (StoreIOException e) {
          out.writerIndex(mark);
          Reply.error(out, misconf(failed(e)));
        } catch (StoreException | IllegalArgumentException | UnsupportedOperationException e) {
          out.writerIndex(mark);
          Reply.error(out, "ERR transaction not committed: " + e.getMessage());
        }
      }
    } finally {
      locks.unlockAll(held);
    }
  }

  private void commit(Session s, Overlay o) {
    if (o.writes.isEmpty()) {
      return;
    }
    List<byte[]> keys = new ArrayList<>(o.writes.size());
    List<byte[]> values = new ArrayList<>(o.writes.size());
    o.writes.forEach(
        (k, v) -> {
          keys.add(k.bytes);
          values.add(v == Overlay.DELETED ? null : v);
        });
    apply(s, keys, values);
  }

  private void reset(Session s, Request r, ByteBuf out) {
    s.endMulti();
    s.db = 0;
    s.resp3 = false;
    s.name = null;
    s.user = null;
    s.authenticated = !defaultUserNeedsPassword();
    Reply.simple(out, "RESET");
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
    Reply.bulkOrNil(out, get(s, r.bytes(1)), s.resp3);
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
    if (!nx && !xx && !get) {
      ReentrantLock l = locks.lockFor(key);
      try {
        put(s, key, value);
      } finally {
        l.unlock();
      }
      Reply.ok(out);
      return;
    }
    boolean onlyIfAbsent = nx;
    boolean onlyIfPresent = xx;
    byte[] old =
        update(
            s, key, o -> (onlyIfAbsent ? o == null : !onlyIfPresent || o != null) ? value : KEEP);
    boolean write = nx ? old == null : !xx || old != null;
    if (get) {
      Reply.bulkOrNil(out, old, s.resp3);
    } else if (write) {
      Reply.ok(out);
    } else {
      Reply.nil(out, s.resp3);
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
    byte[] value = r.bytes(2);
    byte[] old = update(s, r.bytes(1), o -> o == null ? value : KEEP);
    out.writeBytes(old == null ? Reply.ONE : Reply.ZERO);
  }

  private void getset(Session s, Request r, ByteBuf out) {
    byte[] value = r.bytes(2);
    Reply.bulkOrNil(out, update(s, r.bytes(1), o -> value), s.resp3);
  }

  private void getdel(Session s, Request r, ByteBuf out) {
    Reply.bulkOrNil(out, update(s, r.bytes(1), o -> o == null ? KEEP : null), s.resp3);
  }

  private void getrange(Session s, Request r, ByteBuf out) {
    long start = r.longValue(2);
    long end = r.longValue(3);
    byte[] v = get(s, r.bytes(1));
    long len = v == null ? 0 : v.length;
    // Redis's rules: negative offsets count from the end, then both are clamped to the string.
    if (start < 0 && end < 0 && start > end) {
      Reply.bulk(out, new byte[0]);
      return;
    }
    if (start < 0) {
      start = Math.max(0, len + start);
    }
    if (end < 0) {
      end = Math.max(0, len + end);
    }
    if (end >= len) {
      end = len - 1;
    }
    if (len == 0 || start > end) {
      Reply.bulk(out, new byte[0]);
      return;
    }
    Reply.bulk(out, Arrays.copyOfRange(v, (int) start, (int) end + 1));
  }

  private void setrange(Session s, Request r, ByteBuf out) {
    long offset;
    try {
      offset = r.longValue(2);
    } catch (CommandException e) {
      throw new CommandException("ERR value is not an integer or out of range");
    }
    if (offset < 0) {
      throw new CommandException("ERR offset is out of range");
    }
    byte[] key = r.bytes(1);
    int add = r.length(3);
    if (add > 0 && offset + add > info.limits().maxValueSize()) {
      throw tooBig();
    }
    byte[] tail = r.bytes(3);
    int[] length = new int[1];
    update(
        s,
        key,
        old -> {
          if (add == 0) {
            length[0] = old == null ? 0 : old.length;
            return KEEP;
          }
          int len = (int) Math.max(old == null ? 0 : old.length, offset + add);
          byte[] v = new byte[len]; // never the array read: a retried compare needs it intact
          if (old != null) {
            System.arraycopy(old, 0, v, 0, old.length);
          }
          System.arraycopy(tail, 0, v, (int) offset, add);
          length[0] = v.length;
          return v;
        });
    Reply.integer(out, length[0]);
  }

  private void del(Session s, Request r, ByteBuf out) {
    long n = 0;
    for (int i = 1; i < r.count(); i++) {
      byte[] key = r.bytes(i);
      ReentrantLock l = locks.lockFor(key);
      try {
        if (contains(s, key)) {
          delete(s, key);
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
      if (contains(s, r.bytes(i))) {
        n++;
      }
    }
    Reply.integer(out, n);
  }

  private void type(Session s, Request r, ByteBuf out) {
    Reply.simple(out, contains(s, r.bytes(1)) ? "string" : "none");
  }

  private void mget(Session s, Request r, ByteBuf out) {
    Reply.arrayHeader(out, r.count() - 1);
    for (int i = 1; i < r.count(); i++) {
      Reply.bulkOrNil(out, get(s, r.bytes(i)), s.resp3);
    }
  }

  private void mset(Session s, Request r, ByteBuf out, boolean nx) {
    if (r.count() % 2 == 0) {
      throw new CommandException(
          "ERR wrong number of arguments for '" + (nx ? "msetnx" : "mset") + "' command");
    }
    int pairs = (r.count() - 1) / 2;
    List<byte[]> keys = new ArrayList<>(pairs);
    List<byte[]> values = new ArrayList<>(pairs);
    for (int i = 0; i < pairs; i++) {
      keys.add(r.bytes(1 + 2 * i));
      values.add(r.bytes(2 + 2 * i));
    }
    int[] held = locks.lockAll(keys.toArray(new byte[0][]));
    try {
      if (nx) {
        for (byte[] k : keys) {
          if (contains(s, k)) {
            out.writeBytes(Reply.ZERO);
            return;
          }
        }
      }
      apply(s, keys, values);
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
    byte[] v = get(s, r.bytes(1));
    Reply.integer(out, v == null ? 0 : v.length);
  }

  private void append(Session s, Request r, ByteBuf out) {
    byte[] tail = r.bytes(2);
    int[] length = new int[1];
    update(
        s,
        r.bytes(1),
        old -> {
          if (old == null) {
            length[0] = tail.length;
            return tail;
          }
          if ((long) old.length + tail.length > info.limits().maxValueSize()) {
            throw tooBig();
          }
          byte[] v = new byte[old.length + tail.length];
          System.arraycopy(old, 0, v, 0, old.length);
          System.arraycopy(tail, 0, v, old.length, tail.length);
          length[0] = v.length;
          return v;
        });
    Reply.integer(out, length[0]);
  }

  private void decrby(Session s, Request r, ByteBuf out) {
    long d = r.longValue(2);
    if (d == Long.MIN_VALUE) {
      throw new CommandException("ERR decrement would overflow");
    }
    incrBy(s, r, out, -d);
  }

  private void incrBy(Session s, Request r, ByteBuf out, long delta) {
    long[] next = new long[1];
    update(
        s,
        r.bytes(1),
        old -> {
          long current = old == null ? 0 : Numbers.parseStored(old);
          try {
            next[0] = Math.addExact(current, delta);
          } catch (ArithmeticException e) {
            throw new CommandException("ERR increment or decrement would overflow");
          }
          return Long.toString(next[0]).getBytes(StandardCharsets.US_ASCII);
        });
    Reply.integer(out, next[0]);
  }

  /**
   * INCRBYFLOAT in decimal arithmetic: the sum is exact (Redis uses a long double and prints 17
   * significant digits, so "10.5" + "0.1" is "10.6" in both), trailing zeros are dropped, and the
   * result never uses an exponent.
   */
  private void incrbyfloat(Session s, Request r, ByteBuf out) {
    BigDecimal delta = decimal(r.bytes(2));
    byte[][] result = new byte[1][];
    update(
        s,
        r.bytes(1),
        old -> {
          BigDecimal current = old == null ? BigDecimal.ZERO : decimal(old);
          BigDecimal sum = current.add(delta);
          String text = sum.signum() == 0 ? "0" : sum.stripTrailingZeros().toPlainString();
          if (text.length() > 5000) {
            throw new CommandException("ERR increment would produce NaN or Infinity");
          }
          result[0] = text.getBytes(StandardCharsets.US_ASCII);
          return result[0];
        });
    Reply.bulk(out, result[0]);
  }

  private static BigDecimal decimal(byte[] b) {
    String t = new String(b, StandardCharsets.US_ASCII);
    if (t.isEmpty()
        || t.length() > 5000
        || Character.isWhitespace(t.charAt(0))
        || Character.isWhitespace(t.charAt(t.length() - 1))) {
      throw new CommandException("ERR value is not a valid float");
    }
    try {
      BigDecimal d = new BigDecimal(t);
      if (Math.abs((long) d.scale()) > 5000) {
        throw new CommandException("ERR increment would produce NaN or Infinity");
      }
      return d;
    } catch (NumberFormatException e) {
      throw new CommandException("ERR value is not a valid float");
    }
  }

  private void rename(Session s, Request r, ByteBuf out, boolean nx) {
    byte[] from = r.bytes(1);
    byte[] to = r.bytes(2);
    int[] held = locks.lockAll(new byte[][] {from, to});
    try {
      byte[] v = get(s, from);
      if (v == null) {
        throw new CommandException("ERR no such key");
      }
      if (Arrays.equals(from, to)) {
        out.writeBytes(nx ? Reply.ZERO : Reply.OK);
        return;
      }
      if (nx && contains(s, to)) {
        out.writeBytes(Reply.ZERO);
        return;
      }
      apply(s, List.of(to, from), Arrays.asList(v, null));
      out.writeBytes(nx ? Reply.ONE : Reply.OK);
    } finally {
      locks.unlockAll(held);
    }
  }

  private void copy(Session s, Request r, ByteBuf out) {
    boolean replace = false;
    for (int i = 3; i < r.count(); i++) {
      if (r.is(i, "REPLACE")) {
        replace = true;
      } else if (r.is(i, "DB") && i + 1 < r.count()) {
        if (r.longValue(++i) != s.db) {
          throw new CommandException(
              "ERR COPY to another database is not supported by kv4j-server (only DB "
                  + s.db
                  + ")");
        }
      } else {
        throw syntax();
      }
    }
    byte[] from = r.bytes(1);
    byte[] to = r.bytes(2);
    if (Arrays.equals(from, to)) {
      throw new CommandException("ERR source and destination objects are the same");
    }
    int[] held = locks.lockAll(new byte[][] {from, to});
    try {
      byte[] v = get(s, from);
      if (v == null || (!replace && contains(s, to))) {
        out.writeBytes(Reply.ZERO);
        return;
      }
      put(s, to, v);
      out.writeBytes(Reply.ONE);
    } finally {
      locks.unlockAll(held);
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
      collect(s, range, glob, keys);
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
        try (Cursor c = st(s).scan(range.limit(Math.min(count, Long.MAX_VALUE - 1) + 1))) {
          while (c.hasNext()) {
            if (examined == count) {
              more = true;
              break;
            }
            Entry e = c.next();
            examined++;
            last = e.key();
            if ((glob == null || glob.matches(last)) && !hidden(s, last)) {
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

  private void collect(Session s, KeyRange range, Glob glob, List<byte[]> keys) {
    try (Cursor c = st(s).scan(range)) {
      while (c.hasNext()) {
        byte[] k = c.next().key();
        if ((glob == null || glob.matches(k)) && !hidden(s, k)) {
          keys.add(k);
        }
      }
    }
  }

  private void keys(Session s, Request r, ByteBuf out) {
    Glob glob = new Glob(r.bytes(1));
    List<byte[]> keys = new ArrayList<>();
    collect(s, rangeFor(glob), glob, keys);
    Reply.arrayHeader(out, keys.size());
    for (byte[] k : keys) {
      Reply.bulk(out, k);
    }
  }

  private void dbsize(Session s, Request r, ByteBuf out) {
    AsyncFlush f = flushing;
    if (f != null && s.db == 0) {
      // Only keys written since the flush began are visible.
      long n = 0;
      for (Key k : f.kept) {
        if (store.contains(k.bytes)) {
          n++;
        }
      }
      Reply.integer(out, n);
      return;
    }
    Reply.integer(out, st(s).stats().keyCount());
  }

  /**
   * RANDOMKEY: on an ordered engine, the first visible key at or after a random point between the
   * first and the last key (by their first eight bytes), so it costs two short scans and a seek;
   * keys after large gaps are more likely than others. Unordered engines return their first key.
   */
  private void randomkey(Session s, Request r, ByteBuf out) {
    byte[] first = firstVisible(s, KeyRange.all());
    if (first == null || !ordered) {
      Reply.bulkOrNil(out, first, s.resp3);
      return;
    }
    byte[] last = null;
    try (Cursor c = st(s).scan(KeyRange.all().reverse().limit(1))) {
      if (c.hasNext()) {
        last = c.next().key();
      }
    }
    long lo = prefix64(first);
    long hi = last == null ? lo : prefix64(last);
    byte[] pick = first;
    if (Long.compareUnsigned(hi, lo) > 0) {
      long point = lo + (long) (ThreadLocalRandom.current().nextDouble() * (double) (hi - lo));
      byte[] from = new byte[8];
      for (int i = 0; i < 8; i++) {
        from[i] = (byte) (point >>> (56 - 8 * i));
      }
      byte[] found = firstVisible(s, KeyRange.all().gte(from));
      pick = found == null ? first : found;
    }
    Reply.bulk(out, pick);
  }

  private static long prefix64(byte[] k) {
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = (v << 8) | (i < k.length ? k[i] & 0xFF : 0);
    }
    return v;
  }

  private byte[] firstVisible(Session s, KeyRange range) {
    try (Cursor c = st(s).scan(range)) {
      while (c.hasNext()) {
        byte[] k = c.next().key();
        if (!hidden(s, k)) {
          return k;
        }
      }
    }
    return null;
  }

  // ---- FLUSHALL / FLUSHDB ----

  /** A FLUSHALL ASYNC in progress: keys written since it began are kept, all others are hidden. */
  private static final class AsyncFlush {
    final Set<Key> kept = ConcurrentHashMap.newKeySet();
    volatile boolean cancelled;
  }

  /**
   * FLUSHALL / FLUSHDB. Synchronous: deletes every key in batches of 1000 holding every stripe
   * lock. ASYNC: returns at once; from then on every key that existed is hidden from reads, scans
   * and DBSIZE, and a background thread deletes them, each under its stripe lock, skipping keys
   * written after the command (they stay). FLUSHDB in a database n > 0 deletes the keys of its
   * keyspace synchronously (also when ASYNC); FLUSHALL flushes every other database synchronously
   * and database 0 as above.
   */
  private void flushdb(Session s, Request r, ByteBuf out) {
    if (r.count() > 2 || (r.count() == 2 && !r.is(1, "SYNC") && !r.is(1, "ASYNC"))) {
      throw syntax();
    }
    boolean async = r.count() == 2 && r.is(1, "ASYNC");
    boolean all = r.is(0, "FLUSHALL");
    int[] held = locks.lockEverything();
    try {
      if (s.db != 0 && !all) {
        touchedAll();
        flushNow(database(s.db));
        Reply.ok(out);
        return;
      }
      if (all && keyspaces) {
        for (int db : existingDatabases()) {
          flushNow(database(db));
        }
      }
      AsyncFlush running = flushing;
      if (running != null) {
        running.cancelled = true;
      }
      touchedAll();
      if (async) {
        AsyncFlush f = new AsyncFlush();
        flushing = f;
        flusher.execute(() -> flushInBackground(f));
      } else {
        flushing = null;
        flushNow(store);
      }
    } finally {
      locks.unlockAll(held);
    }
    Reply.ok(out);
  }

  /** The databases n > 0 whose keyspace {@code db<n>} exists in the store. */
  private List<Integer> existingDatabases() {
    List<Integer> dbs = new ArrayList<>();
    for (String name : store.keyspaces()) {
      if (name.matches("db[1-9][0-9]{0,8}")) {
        int n = Integer.parseInt(name.substring(2));
        if (n < DATABASES) {
          dbs.add(n);
        }
      }
    }
    return dbs;
  }

  private void flushNow(Store target) {
    while (true) {
      List<byte[]> keys = new ArrayList<>(FLUSH_BATCH);
      try (Cursor c = target.scan(KeyRange.all().limit(FLUSH_BATCH))) {
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
        target.write(b);
      } else {
        keys.forEach(target::delete);
      }
    }
  }

  private void flushInBackground(AsyncFlush f) {
    try {
      byte[] after = null;
      while (!f.cancelled) {
        List<byte[]> batch = new ArrayList<>(FLUSH_BATCH);
        KeyRange range = after != null && ordered ? KeyRange.all().gt(after) : KeyRange.all();
        try (Cursor c = store.scan(range)) {
          while (c.hasNext() && batch.size() < FLUSH_BATCH) {
            byte[] k = c.next().key();
            if (!f.kept.contains(new Key(k))) {
              batch.add(k);
            }
            after = k;
          }
        }
        if (batch.isEmpty()) {
          break;
        }
        for (byte[] k : batch) {
          if (f.cancelled) {
            return;
          }
          ReentrantLock l = locks.lockFor(k);
          try {
            if (!f.kept.contains(new Key(k))) {
              store.delete(k);
            }
          } finally {
            l.unlock();
          }
        }
      }
      finished(f);
    } catch (StoreIOException e) {
      failed(e); // old keys stay hidden; a later FLUSHALL deletes them
    } catch (RuntimeException e) {
      StderrLog.print("kv4j-server: FLUSHALL ASYNC stopped, old keys stay hidden: " + e);
    }
  }

  private void finished(AsyncFlush f) {
    if (f.cancelled) {
      return;
    }
    int[] held = locks.lockEverything();
    try {
      if (flushing == f) {
        flushing = null;
      }
    } finally {
      locks.unlockAll(held);
    }
  }

  boolean flushInProgress() {
    return flushing != null;
  }

  private void save(Session s, Request r, ByteBuf out) {
    store.sync();
    Reply.ok(out);
  }

  private void time(Session s, Request r, ByteBuf out) {
    Instant now = Instant.now();
    Reply.arrayHeader(out, 2);
    Reply.bulk(out, Long.toString(now.getEpochSecond()));
    Reply.bulk(out, Long.toString(now.getNano() / 1000));
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
          .append("\r\nmaxclients:")
          .append(server.maxClients)
          .append("\r\nblocked_clients:0\r\nkv4j_query_buffers_bytes:")
          .append(server.bufferedBytes.get())
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
      sb.append("# Persistence\r\nloading:")
          .append(reopening ? 1 : 0)
          .append("\r\nrdb_last_bgsave_status:")
          .append(writeFailure == null ? "ok" : "err")
          .append("\r\nkv4j_persistent:")
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
          .append("\r\n\r\n");
    }
    if (every || wanted.contains("replication")) {
      sb.append("# Replication\r\nrole:master\r\nconnected_slaves:0\r\n\r\n");
    }
    if (every || wanted.contains("kv4j")) {
      StoreStats st = store.stats();
      String failure = writeFailure;
      String reopenError = lastReopenError;
      sb.append("# kv4j\r\nstore_state:")
          .append(storeState())
          .append("\r\nstore_error:")
          .append(failure == null ? "" : oneLine(failure))
          .append("\r\nstore_write_failures:")
          .append(writeFailures.get())
          .append("\r\nstore_reopens:")
          .append(reopens.get())
          .append("\r\nstore_reopen_interval_seconds:")
          .append(reopener == null ? 0 : server.options.reopenIntervalSeconds())
          .append("\r\nstore_last_reopen_error:")
          .append(reopenError == null ? "" : oneLine(reopenError))
          .append("\r\nflushall_async_in_progress:")
          .append(flushing != null ? 1 : 0)
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
    if (every || wanted.contains("keyspace")) {
      sb.append("# Keyspace\r\n");
      long keys = flushing != null ? 0 : store.stats().keyCount();
      if (keys > 0) {
        sb.append("db0:keys=").append(keys).append(",expires=0,avg_ttl=0\r\n");
      }
      if (keyspaces) {
        for (int db : existingDatabases()) {
          long n = database(db).stats().keyCount();
          if (n > 0) {
            sb.append("db").append(db).append(":keys=").append(n);
            sb.append(",expires=0,avg_ttl=0\r\n");
          }
        }
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
        + " db="
        + s.db
        + " resp="
        + (s.resp3 ? 3 : 2)
        + " lib-name="
        + (s.libName == null ? "" : s.libName)
        + " lib-ver="
        + (s.libVersion == null ? "" : s.libVersion)
        + " user="
        + (s.user == null ? "default" : s.user.name())
        + " multi="
        + (s.queued == null ? -1 : s.queued.size());
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
      known.put("databases", keyspaces ? Integer.toString(DATABASES) : "1");
      known.put("maxmemory", "0");
      known.put("port", Integer.toString(server.port()));
      known.put("proto-max-bulk-len", Long.toString(server.options.maxBulkBytes()));
      known.put("io-threads", Integer.toString(server.threads));
      known.put("maxclients", Integer.toString(server.maxClients));
      known.put("timeout", Integer.toString(server.options.idleTimeoutSeconds()));
      known.put("protected-mode", server.options.protectedMode() ? "yes" : "no");
      known.put("bind", server.options.bind());
      known.put("requirepass", ""); // Redis shows it; kv4j-server never echoes a password
      known.put(
          "client-query-buffer-limit", Long.toString(server.options.clientQueryBufferLimit()));
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
    if (db != 0 && !keyspaces) {
      throw new CommandException(
          "ERR DB index is out of range (kv4j-server has one database: engine '"
              + info.engine()
              + "' does not support KEYSPACES)");
    }
    if (db < 0 || db >= DATABASES) {
      throw new CommandException(
          "ERR DB index is out of range (kv4j-server has databases 0 to " + (DATABASES - 1) + ")");
    }
    if (db != 0) {
      database((int) db); // opens (creates) the keyspace now, so errors show here
    }
    s.db = (int) db;
    Reply.ok(out);
  }

  private static String oneLine(String m) {
    return m.replace('\r', ' ').replace('\n', ' ');
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
    boolean authenticated = s.authenticated;
    ServerOptions.User user = s.user;
    for (; i < r.count(); i++) {
      if (r.is(i, "AUTH") && i + 2 < r.count()) {
        ServerOptions.User u = login(r.string(i + 1), r.bytes(i + 2));
        authenticated = true;
        user = u;
        i += 2;
      } else if (r.is(i, "SETNAME") && i + 1 < r.count()) {
        name = r.string(++i);
      } else {
        throw new CommandException("ERR Syntax error in HELLO option '" + r.string(i) + "'");
      }
    }
    if (!authenticated) {
      throw new CommandException(
          "NOAUTH HELLO must be called with the client already authenticated, otherwise the"
              + " HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client"
              + " and select the RESP protocol version at the same time");
    }
    s.authenticated = true;
    s.user = user;
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

  /**
   * Checks a user name and password; returns the named user, or null for the default user. The
   * default user without --requirepass is Redis's "nopass" user: any password is accepted.
   */
  private ServerOptions.User login(String name, byte[] password) {
    if (name.equals("default")) {
      byte[] hash = server.options.requirePassHash();
      if (hash == null
          || new ServerOptions.User("default", hash, false).passwordMatches(password)) {
        return null;
      }
    } else {
      for (ServerOptions.User u : server.options.users()) {
        if (u.name().equals(name) && u.passwordMatches(password)) {
          return u;
        }
      }
    }
    throw new CommandException("WRONGPASS invalid username-password pair or user is disabled.");
  }

  private void auth(Session s, Request r, ByteBuf out) {
    if (r.count() > 3) {
      throw syntax();
    }
    if (r.count() == 2) {
      if (!defaultUserNeedsPassword()) {
        throw new CommandException(
            "ERR AUTH <password> called without any password configured for the default user."
                + " Are you sure your configuration is correct?");
      }
      s.user = login("default", r.bytes(1));
    } else {
      s.user = login(r.string(1), r.bytes(2));
    }
    s.authenticated = true;
    Reply.ok(out);
  }

  private void acl(Session s, Request r, ByteBuf out) {
    if (r.is(1, "WHOAMI") && r.count() == 2) {
      Reply.bulk(out, s.user == null ? "default" : s.user.name());
    } else if (r.is(1, "USERS") && r.count() == 2) {
      Reply.arrayHeader(out, 1 + server.options.users().size());
      Reply.bulk(out, "default");
      for (ServerOptions.User u : server.options.users()) {
        Reply.bulk(out, u.name());
      }
    } else {
      throw new CommandException(
          "ERR unknown subcommand '"
              + r.string(1)
              + "'. kv4j-server supports ACL WHOAMI and ACL USERS; users come from --user.");
    }
  }
}
