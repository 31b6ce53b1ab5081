package io.kv4j.etcd;

import io.kv4j.Feature;
import io.kv4j.Limits;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.spi.OptionSpec;
import io.kv4j.spi.StoreProvider;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * Engine {@code etcd}: a store under one key prefix of an etcd v3 cluster, reached through etcd's
 * JSON gateway over {@code java.net.http} (no dependencies). Every write is one etcd transaction,
 * committed on a majority of the members (Raft) before it is acknowledged, so {@code SYNC} and
 * {@code BUFFERED} are both durable on a quorum; batches, also across keyspaces, are one
 * transaction each (atomic); conditional writes compare the value or the create revision; scans and
 * snapshots read at one revision. One open store per prefix, held by a lease-backed lock key that
 * every write checks.
 */
public final class EtcdProvider implements StoreProvider {
  static final Set<Feature> FEATURES =
      EnumSet.of(
          Feature.ORDERED_SCAN,
          Feature.REVERSE_SCAN,
          Feature.SNAPSHOT_SCAN,
          Feature.ATOMIC_BATCH,
          Feature.PERSISTENT,
          Feature.CONDITIONAL_WRITE,
          Feature.SNAPSHOT_READ,
          Feature.KEYSPACES,
          Feature.KEYSPACE_BATCH);

  /**
   * kv4j's minimum value limit (16 MiB), which the API requires of every engine. What etcd takes is
   * less: one value is one request, and a request is capped by option {@code max-request-bytes} (at
   * most 10,000,000: etcd 3.4 cannot read back a WAL entry over 10 MiB), so larger values are
   * refused with IllegalArgumentException naming that option. Storing 16 MiB values would need
   * chunking over several txns (not done; see the README).
   */
  static final Limits LIMITS = new Limits(4096, 16 << 20);

  /** For ServiceLoader. */
  public EtcdProvider() {}

  @Override
  public String id() {
    return "etcd";
  }

  @Override
  public String description() {
    return "etcd v3 cluster via its JSON gateway (key prefix per store, one txn per batch)";
  }

  @Override
  public Set<Feature> features() {
    return FEATURES;
  }

  @Override
  public Limits limits() {
    return LIMITS;
  }

  @Override
  public List<OptionSpec<?>> options() {
    return EtcdSettings.OPTIONS;
  }

  @Override
  public Store open(StoreConfig config) {
    return EtcdStore.open(config, EtcdSettings.of(config));
  }
}
