package io.kv4j.tck;

import io.kv4j.Durability;
import io.kv4j.StoreConfig;
import io.kv4j.etcd.TestEtcd;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The kv4j TCK against the three-member etcd cluster of .ci/etcd.sh (skipped if absent). */
class EtcdTckTest extends ServerTck {
  @BeforeAll
  static void server() {
    TestEtcd.require();
  }

  @AfterAll
  static void dropPrefixes() {
    for (String p : NAMESPACES) {
      TestEtcd.drop(p);
    }
    NAMESPACES.clear();
  }

  @Override
  protected StoreConfig config(Path directory, Durability durability) {
    NAMESPACES.add(TestEtcd.prefixFor(directory));
    return TestEtcd.builder().path(directory).durability(durability).build();
  }
}
