package io.kv4j.micrometer;

/**
 * The calls {@link MeteredStore} times, with the value of their {@code operation} tag. A tag value
 * is the method's name in kebab case, except where two methods share a name ({@code delete-if} is
 * the conditional delete) or the name says little ({@code batch} is {@code write(WriteBatch)}).
 */
enum Operation {
  GET("get"),
  CONTAINS("contains"),
  GET_ALL("get-all"),
  PUT("put"),
  DELETE("delete"),
  PUT_IF_ABSENT("put-if-absent"),
  REPLACE("replace"),
  DELETE_IF("delete-if"),
  BATCH("batch"),
  BATCH_IF("batch-if"),
  SCAN("scan"),
  SNAPSHOT("snapshot"),
  SNAPSHOT_GET("snapshot-get"),
  SNAPSHOT_GET_ALL("snapshot-get-all"),
  SNAPSHOT_SCAN("snapshot-scan"),
  SYNC("sync"),
  COMPACT("compact"),
  VERIFY("verify"),
  BACKUP("backup"),
  KEYSPACE("keyspace"),
  KEYSPACES("keyspaces"),
  DROP_KEYSPACE("drop-keyspace");

  final String tag;

  Operation(String tag) {
    this.tag = tag;
  }

  /** Whether the call answers true when it changed the store and false when a condition failed. */
  boolean conditional() {
    return this == PUT_IF_ABSENT || this == REPLACE || this == DELETE_IF || this == BATCH_IF;
  }
}
