/**
 * kv4j-server: the Redis protocol (RESP2, and RESP3 after {@code HELLO 3}) in front of any kv4j
 * engine. Only {@link io.kv4j.server.Main} is public.
 *
 * <p><b>Threading.</b> Netty event loops (native epoll where available, NIO otherwise) read and
 * write; each connection's requests are parsed and executed in order on a shared worker pool
 * ({@code --workers}, or inline on the loops with {@code --workers 0}); the store is shared by all
 * threads and must be thread-safe, as every kv4j engine is. Every command that writes a key takes
 * that key's stripe lock, so read-modify-write commands (INCR, APPEND, SET NX/XX, GETSET, GETDEL,
 * MSET, DEL) are atomic against each other; plain reads take no lock. Against other servers writing
 * the same store, single-key read-modify-writes use the engine's conditional writes, and EXEC,
 * RENAME, RENAMENX, COPY and MSETNX commit with {@code Store.writeIf} where the engine has
 * CONDITIONAL_BATCH ({@code SharedStoreTransaction}).
 *
 * <p><b>Ordering.</b> Replies on one connection are in request order (pipelining). SCAN and KEYS
 * walk the engine's unsigned-lexicographic key order.
 */
package io.kv4j.server;
