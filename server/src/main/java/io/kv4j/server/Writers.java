package io.kv4j.server;

import io.kv4j.Store;

/**
 * Who else may write the store this server serves, which decides what a single-key
 * read-modify-write (INCR, SETNX, SET NX/XX/GET, APPEND, ...) costs: this server's own writers of a
 * key are serialised by its stripe lock, so only writers outside the server need the engine's
 * compare-and-set (a second read of the key inside the engine, and a retry when it changed).
 */
enum Writers {
  /**
   * The server opened the store itself and no one else can write it: a {@code memory} store (it
   * lives in this process, which opened it) or a {@code hashlog} store (its lock file keeps every
   * other writer out for as long as it is open). The stripe lock is enough.
   */
  SOLE,

  /**
   * Other servers or applications may write the same store (a postgres table, a redis prefix, an
   * engine that allows several processes, or a store object the caller also uses): read-modify-
   * writes are compare-and-sets where the engine declares CONDITIONAL_WRITE.
   */
  SHARED;

  /** For a store the server has just opened itself from its URI. */
  static Writers ofOpened(Store store) {
    String type = store.getClass().getName();
    return type.equals("io.kv4j.memory.MemoryStore") || type.equals("io.kv4j.hashlog.HashLogStore")
        ? SOLE
        : SHARED;
  }
}
