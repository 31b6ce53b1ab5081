package io.kv4j.etcd;

import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import io.kv4j.tck.ServerTck;
import io.kv4j.tck.TckEnvironment;
import io.kv4j.tck.TckRules;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;

/**
 * Groups 7 (crashes) and 10 (lifecycle) of the kv4j TCK, with {@link EtcdTckTest}'s configuration
 * and depths, run beside it: after each kill of a crash rule's child JVM the reopen waits for the
 * child's lease to expire, and rule 10.3 waits {@code lock-wait} for a held lock, so most of these
 * groups' time is waiting, which the other groups use meanwhile.
 */
@TckRules({"7", "10"})
class EtcdLifecycleTckTest extends ServerTck {
  @BeforeAll
  static void server() {
    TestEtcd.require();
  }

  @Override
  protected TckEnvironment environment() {
    return EtcdTckTest.depths(super.environment());
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
