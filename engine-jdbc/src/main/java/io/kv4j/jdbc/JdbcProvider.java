package io.kv4j.jdbc;

import io.kv4j.Feature;
import io.kv4j.Limits;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.spi.OptionSpec;
import io.kv4j.spi.StoreProvider;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/** The shared half of the SQL providers. */
abstract class JdbcProvider implements StoreProvider {
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
          Feature.KEYSPACE_BATCH,
          Feature.CONDITIONAL_BATCH);
  // No BACKUP: the data lives on the server, whose own tools copy it consistently while it serves
  // (pg_dump / pg_basebackup, mariadb-dump --single-transaction / mariadb-backup).

  private final Dialect dialect;
  private final OptionSpec<Integer> port;

  JdbcProvider(Dialect dialect) {
    this.dialect = dialect;
    this.port = JdbcSettings.portOption(dialect.defaultPort());
  }

  @Override
  public String id() {
    return dialect.id();
  }

  @Override
  public Set<Feature> features() {
    return FEATURES;
  }

  @Override
  public Limits limits() {
    return new Limits(dialect.maxKeySize(), dialect.maxValueSize());
  }

  @Override
  public List<OptionSpec<?>> options() {
    return JdbcSettings.options(port);
  }

  @Override
  public Store open(StoreConfig config) {
    return JdbcStore.open(dialect, config, JdbcSettings.of(config, port), limits());
  }
}
