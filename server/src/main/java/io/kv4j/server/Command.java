package io.kv4j.server;

import io.netty.buffer.ByteBuf;
import java.util.List;

/** One command of the table: its implementation and the metadata COMMAND reports. */
final class Command {
  /** What a command does: reads its request and writes its reply. */
  @FunctionalInterface
  interface Handler {
    void run(Session s, Request r, ByteBuf out);
  }

  final String name;
  final int arity;
  final String[] flags;
  final int firstKey;
  final int lastKey;
  final int step;
  final Handler handler;
  final boolean quit;
  final boolean write;
  final boolean noAuth;

  /** Runs at once inside MULTI instead of being queued (MULTI, EXEC, DISCARD, WATCH, ...). */
  final boolean transactionControl;

  /** Refused inside MULTI (FLUSHALL and FLUSHDB, which have no keys to lock, and SELECT). */
  final boolean noMulti;

  /**
   * Writes keys depending on what it read of other keys (RENAME, RENAMENX, COPY, MSETNX): on a
   * store shared with other servers it runs as a one-command {@link SharedStoreTransaction}.
   */
  final boolean readsOtherKeys;

  /**
   * May run on an event loop: its work is bounded by its request and cannot wait for anything but
   * the engine's short internal locks (see {@link Commands} for which engines that holds for).
   */
  final boolean loop;

  Command(
      String name,
      int arity,
      String flags,
      int firstKey,
      int lastKey,
      int step,
      Handler h,
      boolean loop) {
    this.name = name;
    this.arity = arity;
    this.flags = flags.isEmpty() ? new String[0] : flags.split(" ");
    this.firstKey = firstKey;
    this.lastKey = lastKey;
    this.step = step;
    this.handler = h;
    this.quit = name.equals("QUIT");
    List<String> f = List.of(this.flags);
    this.write = f.contains("write");
    this.noAuth = f.contains("no-auth");
    this.noMulti = f.contains("no-multi");
    this.transactionControl =
        List.of("MULTI", "EXEC", "DISCARD", "WATCH", "QUIT", "RESET").contains(name);
    this.readsOtherKeys = List.of("RENAME", "RENAMENX", "COPY", "MSETNX").contains(name);
    this.loop = loop;
  }

  /** The keys {@code args} (a whole request, name first) names, by the key positions above. */
  void addKeys(byte[][] args, List<byte[]> keys) {
    int last = lastKey < 0 ? args.length + lastKey : lastKey;
    for (int i = firstKey; firstKey > 0 && i <= last && i < args.length; i += step) {
      keys.add(args[i]);
    }
  }
}
