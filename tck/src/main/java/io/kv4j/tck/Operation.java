package io.kv4j.tck;

import java.util.List;

/**
 * One operation of a {@link History}: what a client asked, what it was answered, and when.
 *
 * <p>Every operation is described by the same three parts, so that one model ({@link
 * RegisterModel}) steps them all: the keys it <em>reads</em> (with the values it was answered), the
 * <em>conditions</em> it compares (a key with the value it must hold, null for absent) and the
 * <em>writes</em> it makes when its conditions hold (a key with its new value, null for a delete).
 * A {@code get} reads one key; a {@code put} writes one; {@code replace} compares one and writes
 * it; a snapshot read reads several; a batch writes several; {@code writeIf} compares and writes
 * several. Conditions are answered by {@link #answer()}: true when they held (and the writes were
 * made), false when they did not (and nothing was written).
 *
 * <p>{@code invoked} is {@link System#nanoTime()} taken just before the call, {@code returned} just
 * after it returned; so the operation took effect, if at all, somewhere in between. An operation
 * that threw an environmental error is <em>indeterminate</em> ({@link #indeterminate()}): it may or
 * may not have taken effect, its answer is unknown and its return is at +infinity ({@code returned}
 * is {@link Long#MAX_VALUE}).
 *
 * @param id the operation's number in its history, in the order the calls were made
 * @param client the client (thread) that made the call
 * @param name what the call was, for the timeline ({@code get}, {@code replace}, ...)
 * @param reads the keys read, each with the value it was answered (null: absent)
 * @param conditions the keys compared, each with the value it must hold (null: absent)
 * @param writes the keys written when the conditions hold, each with its value (null: deleted)
 * @param answer whether the conditions held, when there are conditions and it is known
 * @param invoked nanoTime just before the call
 * @param returned nanoTime just after it returned; {@link Long#MAX_VALUE} when indeterminate
 * @param failure what the call threw, for the timeline (null when it returned)
 */
record Operation(
    int id,
    int client,
    String name,
    List<Cell> reads,
    List<Cell> conditions,
    List<Cell> writes,
    Boolean answer,
    long invoked,
    long returned,
    String failure) {

  /**
   * A key (in a keyspace: null for the store's own keys) and a value (null: absent).
   *
   * @param keyspace null for the store's own keys, else the keyspace a batch named
   * @param key the key
   * @param value the value read, expected or written; null for absent or deleted
   */
  record Cell(String keyspace, byte[] key, byte[] value) {}

  /** Whether the call threw an environmental error: its effect is optional, its answer unknown. */
  boolean indeterminate() {
    return returned == Long.MAX_VALUE;
  }

  /** Whether the operation changes nothing: a read, or an indeterminate read. */
  boolean readOnly() {
    return writes.isEmpty();
  }
}
