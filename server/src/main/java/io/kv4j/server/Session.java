package io.kv4j.server;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/** Per-connection state visible to commands. Used by one thread at a time (the connection's). */
final class Session {
  final long id;
  final long createdMillis = System.currentTimeMillis();
  final boolean local;
  String remote = "?";
  String name;
  String libName;
  String libVersion;
  boolean resp3;

  /** The SELECTed database: 0 is the store's own keys, n > 0 the keyspace {@code db<n>}. */
  int db;

  /**
   * Whether the client may run commands (false until AUTH when the default user has a password).
   * Until then its requests are held to Redis's unauthenticated limits (10 arguments of at most 16
   * KiB) and it has {@code --auth-timeout} seconds to authenticate. Volatile: the event loop reads
   * it when that deadline passes.
   */
  volatile boolean authenticated;

  /** The authenticated named user, or null for the default user. */
  ServerOptions.User user;

  /** Commands queued after MULTI (each a copy of its arguments), or null outside MULTI. */
  List<byte[][]> queued;

  /**
   * The memory {@link #queued} holds, charged to the server-wide input budget and counted against
   * this client's query-buffer limit: a transaction is input waiting to run.
   */
  long queuedBytes;

  /** The size of the connection's input buffer, which the client limit counts with the queue. */
  long inputBytes;

  /** Plain SETs of the pipeline not yet written (see {@link Commands#flushPending}). */
  PendingSets pending;

  /** Scratch for the stripes of a request's keys (used by the thread running the request). */
  int[] stripes = new int[8];

  /**
   * The running request's keys' stripe locks are held by its thread (an event loop took them all
   * before running it, see {@link Commands#execute}), so its writes need not lock them again
   * ({@link KeyLocks#lockFor(Session, byte[])}, MSET).
   */
  boolean keysLocked;

  /** The server-wide input budget the queue is charged to. */
  private final AtomicLong budget;

  /** An error was reported while queueing: EXEC answers EXECABORT. */
  boolean queueFailed;

  /** Keys under WATCH with what each was when watched; null when none. */
  private List<Watch> watched;

  /** Where this session is counted as a watcher while {@link #watched} is not null. */
  private WatchVersions counted;

  /** Keys under WATCH with what each was when watched; null when none. */
  List<Watch> watched() {
    return watched;
  }

  /**
   * Adds a watch. The first one counts this session among {@code versions}' watchers: call it
   * before reading the key's version (see {@link WatchVersions}).
   */
  void watch(WatchVersions versions) {
    if (watched == null) {
      watched = new ArrayList<>();
      counted = versions;
      versions.watcherAdded();
    }
  }

  void addWatch(Watch w) {
    watched.add(w);
  }

  /**
   * Forgets the watches but leaves this session counted as a watcher: EXEC still compares their
   * versions after the transaction ended, and must be counted until then. Returns what to call
   * {@link WatchVersions#watcherGone} on afterwards, or null.
   */
  WatchVersions detachWatches() {
    WatchVersions c = counted;
    watched = null;
    counted = null;
    return c;
  }

  /** Forgets every watch (UNWATCH, DISCARD, RESET, disconnect); idempotent. */
  void unwatch() {
    watched = null;
    if (counted != null) {
      counted.watcherGone();
      counted = null;
    }
  }

  /** The writes of the transaction EXEC is running, or null outside EXEC. */
  Overlay overlay;

  /**
   * A watched key at WATCH time: its version on this server, its database, and (on a store shared
   * with other servers, {@link Dataset#shared}) its stored value, null when absent.
   */
  record Watch(byte[] key, long version, int db, byte[] value) {}

  /**
   * What queued commands can change about the connection (HELLO, AUTH, CLIENT SETNAME/SETINFO): a
   * transaction that runs again starts from the same settings.
   */
  record Settings(
      boolean resp3,
      String name,
      String libName,
      String libVersion,
      ServerOptions.User user,
      boolean authenticated) {}

  Session(long id, boolean local, AtomicLong budget) {
    this.id = id;
    this.local = local;
    this.budget = budget;
  }

  Settings settings() {
    return new Settings(resp3, name, libName, libVersion, user, authenticated);
  }

  void restore(Settings s) {
    resp3 = s.resp3();
    name = s.name();
    libName = s.libName();
    libVersion = s.libVersion();
    user = s.user();
    authenticated = s.authenticated();
  }

  void beginMulti() {
    queued = new ArrayList<>();
    queueFailed = false;
  }

  void endMulti() {
    queued = null;
    queueFailed = false;
    unwatch();
    releaseQueue();
  }

  /** Charges {@code bytes} more of queued commands to the budget. */
  void chargeQueue(long bytes) {
    queuedBytes += bytes;
    budget.addAndGet(bytes);
  }

  /**
   * Takes the queue's charge out of the session without giving it back (EXEC holds the queue while
   * it runs, and gives the charge back through {@link #release} when done).
   */
  long detachQueueCharge() {
    long b = queuedBytes;
    queuedBytes = 0;
    return b;
  }

  void release(long bytes) {
    budget.addAndGet(-bytes);
  }

  /** Gives the queue's charge back to the budget (the queue is dropped or has run). */
  void releaseQueue() {
    if (queuedBytes != 0) {
      budget.addAndGet(-queuedBytes);
      queuedBytes = 0;
    }
  }

  /**
   * A transaction that can no longer run: its commands are dropped now (their memory and charge
   * released), and EXEC will answer EXECABORT.
   */
  void abortQueue() {
    queueFailed = true;
    if (queued != null && !queued.isEmpty()) {
      queued = new ArrayList<>();
    }
    releaseQueue();
  }
}
