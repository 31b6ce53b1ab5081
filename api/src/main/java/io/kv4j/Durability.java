package io.kv4j;

/**
 * What an acknowledged write survives. Every persistent engine honours both modes; the default of
 * {@link StoreConfig} is {@link #SYNC}, because a storage library should lose nothing unless told
 * it may.
 */
public enum Durability {
  /**
   * Acknowledged writes survive power loss and OS crashes: the engine forces its log to stable
   * storage before a write returns. Concurrent writers may share one force (group commit).
   */
  SYNC,
  /**
   * Acknowledged writes survive a crash of the process (kill -9) but not of the operating system:
   * the data has reached the OS page cache before a write returns. {@link Store#sync()} makes
   * everything written so far durable.
   */
  BUFFERED
}
