/**
 * The {@code redis} and {@code redis-sharded} engines: a store is a namespace on a Redis server or
 * Redis Cluster, reached through Jedis; {@code redis} keeps a store (and its keyspaces) in one hash
 * slot, {@code redis-sharded} spreads one store's keys over {@code shards} hash-tagged shards, so
 * over every primary. Only the providers, {@link io.kv4j.redis.RedisProvider} and {@link
 * io.kv4j.redis.RedisShardedProvider}, are public.
 *
 * <p>Layout: all keys of a store carry one hash tag {@code {ns}}: {@code {ns}:v} is a hash of key →
 * value, {@code {ns}:i} a sorted set of the keys (all scores 0) kept in step with it by Lua
 * scripts, {@code {ns}:meta} marks the store as created and {@code {ns}:lock} is its open lock.
 *
 * <p>Thread-safety: a store is safe for use from many threads; each call borrows a pooled
 * connection. Every write is one Lua script, so it is atomic on the server. A cursor fetches pages
 * of {@code fetch-size} entries, each page atomically, but is not a snapshot: it may see writes
 * made after it opened, and it still returns keys strictly in order, each at most once.
 *
 * <p>Ordering: Redis compares sorted-set members of equal score with memcmp, a shorter member first
 * on a common prefix, which is {@link java.util.Arrays#compareUnsigned(byte[], byte[])} order.
 */
package io.kv4j.redis;
