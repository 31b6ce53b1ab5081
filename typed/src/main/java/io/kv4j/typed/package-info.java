/**
 * Typed keys and values over any kv4j {@link io.kv4j.Store}: {@link io.kv4j.typed.Tuple}
 * (order-preserving tuple keys, FoundationDB's tuple encoding), {@link io.kv4j.typed.KeyCodec} and
 * {@link io.kv4j.typed.ValueCodec}, the {@link io.kv4j.typed.TypedStore} facade and the {@link
 * io.kv4j.typed.StoreMap} {@link java.util.concurrent.ConcurrentNavigableMap} view.
 */
package io.kv4j.typed;
