package io.kv4j.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kv4j.spi.StoreProvider;
import java.lang.reflect.Field;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The CLI ships every engine module, so its classpath is where the one list of engine artifacts in
 * {@code io.kv4j.Stores} (used to tell a user which artifact to add) can be checked whole.
 */
class EngineListTest {
  @Test
  void everyEngine_isOnTheCliClasspathAndInTheArtifactHintList() throws Exception {
    Field f = io.kv4j.Stores.class.getDeclaredField("ARTIFACTS");
    f.setAccessible(true);
    @SuppressWarnings("unchecked")
    Map<String, String> artifacts = (Map<String, String>) f.get(null);
    TreeSet<String> ids = new TreeSet<>();
    for (StoreProvider p : ServiceLoader.load(StoreProvider.class)) {
      ids.add(p.id());
      ids.addAll(p.aliases());
    }
    assertThat(ids)
        .as("engines the kv4j jar ships (every engine module)")
        .contains(
            "hashlog", "rocksdb", "lmdb", "sqlite", "postgres", "mysql", "redis", "etcd", "memory");
    assertThat(new TreeSet<>(artifacts.keySet()))
        .as("Stores.ARTIFACTS must name the artifact of every id and alias, and nothing else")
        .isEqualTo(ids);
  }
}
