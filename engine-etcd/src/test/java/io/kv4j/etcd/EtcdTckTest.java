package io.kv4j.etcd;

import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import io.kv4j.tck.ServerTck;
import io.kv4j.tck.TckEnvironment;
import io.kv4j.tck.TckRules;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;

/**
 * The kv4j TCK against the three-member etcd cluster of .ci/etcd.sh (skipped if absent): every
 * group but 7 (crashes) and 10 (lifecycle), which {@link EtcdLifecycleTckTest} runs beside this
 * class on the same configuration. Those two groups spend most of their time waiting, on the lease
 * of a killed child JVM's lock (its TTL, 5 s, after each kill) and on {@code lock-wait} (rule
 * 10.3), time the other groups use when the classes run side by side (see
 * junit-platform.properties). {@link EtcdTckSplitTest} checks that the two classes select every
 * group of the kit exactly once.
 */
@TckRules({
  "1", "2", "3", "4", "5", "6", "8", "9", "11", "12", "13", "14", "15", "16", "17", "18", "19"
})
class EtcdTckTest extends ServerTck {
  @BeforeAll
  static void server() {
    TestEtcd.require();
  }

  /**
   * Smaller depths than the kit's defaults: every write is a Raft commit fsynced on two members and
   * every read a network round trip (milliseconds each, tens of them on a busy CI box), so the
   * model rules run 1,000 operations instead of 3,000, rule 9.4 20,000 keys instead of 100,000, the
   * stress rules 200 operations per thread instead of 2,000, and the crash rules one round per
   * durability (the data lives in the cluster; the child JVM only holds connections).
   */
  @Override
  protected TckEnvironment environment() {
    return depths(super.environment());
  }

  /**
   * These depths applied to an environment (also {@link EtcdLifecycleTckTest}'s and {@link
   * EtcdSecureTckTest}'s).
   */
  static TckEnvironment depths(TckEnvironment base) {
    return base.toBuilder().ops(1_000).manyKeys(20_000).stressOps(200).crashRounds(1).build();
  }

  @Override
  protected StoreConfig config(Path directory, Durability durability) {
    return TestEtcd.builder().path(directory).durability(durability).build();
  }

  /** The keys under the store's prefix. */
  @Override
  protected void dropNamespace(Path directory) {
    TestEtcd.drop(TestEtcd.prefixFor(directory));
  }
}
