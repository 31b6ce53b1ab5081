/**
 * For engine authors: implement {@link io.kv4j.spi.StoreProvider}, register it with {@link
 * java.util.ServiceLoader}, and prove the engine with the kv4j TCK. {@link
 * io.kv4j.spi.AbstractStore} and {@link io.kv4j.spi.AbstractCursor} do the argument checks, the
 * closed-state handling and the cursor bookkeeping every engine needs, so an engine only writes its
 * storage code; {@link io.kv4j.spi.DirectoryLock} gives the one-open-per-directory rule; {@link
 * io.kv4j.spi.CallGate} counts calls in flight into native handles or mappings so close waits for
 * them, without making concurrent reads contend. Server engines (data on a SQL or Redis server)
 * derive their server-side names from the store path with {@link io.kv4j.spi.ServerNames} and keep
 * their server lock or lease alive with {@link io.kv4j.spi.LockKeeper}. {@link
 * io.kv4j.spi.GroupCommit} lets concurrent single writes share one transaction and one sync: the
 * engine supplies a {@link io.kv4j.spi.GroupCommit.Committer} (commit a group, map its failure).
 *
 * <p><b>Thread-safety.</b> Providers are stateless and thread-safe. Subclasses of {@link
 * io.kv4j.spi.AbstractStore} must make their {@code do*} methods safe for concurrent calls; cursor
 * methods are called by one thread at a time.
 */
package io.kv4j.spi;
