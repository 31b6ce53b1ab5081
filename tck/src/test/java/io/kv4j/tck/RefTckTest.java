package io.kv4j.tck;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.tck.ref.RefProvider;
import java.nio.file.Path;

/**
 * The persistent {@code ref} engine without defects passes the whole kit, including the crash and
 * locking rules the memory engine skips. It is the control for {@link BrokenEnginesTest}.
 */
class RefTckTest extends StoreTck {
  @Override
  protected StoreConfig config(Path directory, Durability durability) {
    return StoreConfig.builder("ref").path(directory).durability(durability).build();
  }

  @Override
  protected boolean failBackgroundWork(Store store) {
    return RefProvider.failBackgroundWork(store);
  }
}
