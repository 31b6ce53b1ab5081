package io.kv4j.server;

import java.util.ArrayList;
import java.util.List;

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
   */
  boolean authenticated;

  /** The authenticated named user, or null for the default user. */
  ServerOptions.User user;

  /** Commands queued after MULTI (each a copy of its arguments), or null outside MULTI. */
  List<byte[][]> queued;

  /** An error was reported while queueing: EXEC answers EXECABORT. */
  boolean queueFailed;

  /** Keys under WATCH with what each was when watched; null when none. */
  List<Watch> watched;

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

  Session(long id, boolean local) {
    this.id = id;
    this.local = local;
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
    watched = null;
  }
}
