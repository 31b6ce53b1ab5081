package io.kv4j.lmdb;

import io.kv4j.StoreClosedException;
import io.kv4j.spi.CallGate;
import org.lmdbjava.Dbi;

/**
 * One LMDB database of the store: the store's own keys (the unnamed database in formats 1 and 2,
 * the database named {@code default} in formats 3 and 4) or a keyspace (a named database).
 *
 * <p>A keyspace's database handle (dbi) is freed when the keyspace is dropped ({@code mdb_drop}
 * with del=1 closes it, and LMDB may give its number to the next database opened), so every call
 * that uses the handle of a named keyspace counts itself in this space's gate; the drop closes the
 * gate and waits for those calls before it frees the handle. The store's own database is never
 * dropped and has no gate.
 */
final class Space {
  private final String name; // null: the store's own keys
  private final Dbi<byte[]> dbi;
  private final CallGate gate;
  private final String describe;

  Space(String name, Dbi<byte[]> dbi, String describe) {
    this.name = name;
    this.dbi = dbi;
    this.gate = name == null ? null : new CallGate();
    this.describe = describe;
  }

  String name() {
    return name;
  }

  Dbi<byte[]> dbi() {
    return dbi;
  }

  /**
   * Counts a call in; returns its token for {@link #exit(int)}.
   *
   * @throws StoreClosedException if the keyspace was dropped
   */
  int enter() {
    if (gate == null) {
      return 0;
    }
    int token = gate.enter();
    if (token < 0) {
      throw new StoreClosedException(describe + ": keyspace '" + name + "' was dropped");
    }
    return token;
  }

  void exit(int token) {
    if (gate != null) {
      gate.exit(token);
    }
  }

  /** Refuses calls from now on and waits for those in flight. */
  void retire() {
    if (gate != null) {
      gate.close();
    }
  }
}
