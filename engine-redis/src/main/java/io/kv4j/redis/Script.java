package io.kv4j.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import redis.clients.jedis.AbstractPipeline;
import redis.clients.jedis.Response;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisNoScriptException;

/**
 * A Lua script run with {@code EVALSHA}, falling back to {@code EVAL} when the server answers
 * {@code NOSCRIPT} (its script cache is empty after a restart, a failover, {@code SCRIPT FLUSH}, or
 * on a node that never ran it); {@code EVAL} caches the script again, so the next call is an {@code
 * EVALSHA}. This sends the 40-byte digest instead of the script's source on every call. In a
 * cluster, Jedis routes both commands by the slot of the first key; every script here names only
 * keys of one store's hash tag, so it runs on the one primary that holds them all.
 */
final class Script {
  private final byte[] source;
  private final byte[] sha;

  Script(String source) {
    this.source = source.getBytes(StandardCharsets.UTF_8);
    try {
      byte[] digest = MessageDigest.getInstance("SHA-1").digest(this.source);
      this.sha = HexFormat.of().formatHex(digest).getBytes(StandardCharsets.US_ASCII);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is missing from this JVM", e);
    }
  }

  /**
   * Runs the script atomically on the server.
   *
   * @param client the client
   * @param keys the keys it touches, all in one hash slot
   * @param args its arguments
   * @return the script's reply
   */
  Object run(UnifiedJedis client, List<byte[]> keys, List<byte[]> args) {
    return runCached(client, keys, args);
  }

  /**
   * Queues the script on a pipeline with {@code EVAL} (the source: a pipelined {@code NOSCRIPT}
   * could not be retried in place).
   *
   * @param pipeline the pipeline
   * @param keys the keys it touches, all in one hash slot
   * @param args its arguments
   * @return the reply, once the pipeline is synced
   */
  Response<Object> queue(AbstractPipeline pipeline, List<byte[]> keys, List<byte[]> args) {
    return pipeline.eval(source, keys, args);
  }

  private Object runCached(UnifiedJedis client, List<byte[]> keys, List<byte[]> args) {
    try {
      return client.evalsha(sha, keys, args);
    } catch (JedisNoScriptException e) {
      return client.eval(source, keys, args);
    }
  }
}
