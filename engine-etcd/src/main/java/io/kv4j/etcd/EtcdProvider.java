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
 * {@code BUFFERED} are both durable on a quorum; batches, also across keyspaces, are published by
 * one transaction each (atomic), values too large for one request chunked first; conditional writes
 * and conditional batches compare the value, the create revision or the modification revision in
 * the txn that publishes the write; scans and snapshots read at one revision. One open store per
 * prefix, held by a lease-backed lock key that every write checks.
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
          Feature.CONDITIONAL_BATCH,
          Feature.SNAPSHOT_READ,
          Feature.KEYSPACES,
          Feature.KEYSPACE_BATCH);

  /**
   * Keys up to 4096 bytes; values up to kv4j's minimum, 16 MiB. One etcd request carries at most
   * option {@code max-request-bytes} (at most 10,000,000: etcd 3.4 cannot read back a WAL entry
   * over 10 MiB), so larger values are written in chunks by several requests and published by one
   * txn (see {@link Writes}).
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
    return Opening.open(config, EtcdSettings.of(config));
  }
}
