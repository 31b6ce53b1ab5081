/**
 * The {@code etcd} engine: a store is a key prefix on an etcd v3 cluster, reached through etcd's
 * JSON gateway ({@code /v3/...}) over {@code java.net.http}. Only {@link io.kv4j.etcd.EtcdProvider}
 * is public.
 *
 * <p>Layout under the store's prefix {@code P}: {@code P d/<key>} the store's own keys, {@code P
 * k/<name>/<key>} keyspace {@code name}'s, {@code P c/...} the chunks of values too large for one
 * request, {@code P m/meta} marks the store as created, {@code P m/lock} is its open lock (attached
 * to a lease kept alive while open), {@code P m/ks/<name>} registers a keyspace; the byte-level
 * format is in {@code ValueCodec}. etcd orders keys bytewise, which is {@link
 * java.util.Arrays#compareUnsigned(byte[], byte[])} order.
 *
 * <p>Thread-safety: a store is safe for use from many threads; requests share one HTTP client.
 */
package io.kv4j.etcd;
