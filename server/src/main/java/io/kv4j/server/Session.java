package io.kv4j.server;

/** Per-connection state visible to commands. */
final class Session {
  final long id;
  final long createdMillis = System.currentTimeMillis();
  String remote = "?";
  String name;
  String libName;
  String libVersion;
  boolean resp3;

  Session(long id) {
    this.id = id;
  }
}
