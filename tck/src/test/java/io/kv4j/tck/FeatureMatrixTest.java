package io.kv4j.tck;

import io.kv4j.Durability;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.tck.ref.RefProvider;
import java.nio.file.Path;
import org.junit.jupiter.api.Nested;

/**
 * The whole kit on the {@code ref} engine under feature subsets, so that every skip path and every
 * guard of a rule ({@code has(Feature)}) runs in the build: an engine declaring only some features
 * must be able to pass. Each subset is the same defect-free engine registered under another id
 * ({@code ref-none}, {@code ref-o}, ..., {@code ref-k}, {@code ref-kb}, {@code ref-kx} for the
 * keyspace features) declaring fewer features; it refuses batches and reverse scans when it does
 * not declare them. The full set is {@link RefTckTest}. Rules skip by feature only, so the subsets
 * without {@code PERSISTENT} cost a few seconds each.
 */
class FeatureMatrixTest {

  /** The kit on the engine registered under {@code id}. */
  abstract static class Subset extends StoreTck {
    abstract String id();

    @Override
    protected StoreConfig config(Path directory, Durability durability) {
      return StoreConfig.builder(id()).path(directory).durability(durability).build();
    }

    /** The flusher of every subset fails as the full engine's does: 10.15 runs, not skips. */
    @Override
    protected boolean failBackgroundWork(Store store) {
      return RefProvider.failBackgroundWork(store);
    }
  }

  /** No feature declared. */
  @Nested
  class NoFeatures extends Subset {
    @Override
    String id() {
      return "ref-none";
    }
  }

  /** {@code ORDERED_SCAN} only: a reverse scan is refused (rule 4.3 used to open one). */
  @Nested
  class Ordered extends Subset {
    @Override
    String id() {
      return "ref-o";
    }
  }

  /** {@code ORDERED_SCAN} and {@code REVERSE_SCAN}. */
  @Nested
  class OrderedReverse extends Subset {
    @Override
    String id() {
      return "ref-or";
    }
  }

  /** Ordered, reverse and snapshot scans. */
  @Nested
  class OrderedReverseSnapshot extends Subset {
    @Override
    String id() {
      return "ref-ors";
    }
  }

  /** {@code ATOMIC_BATCH} only. */
  @Nested
  class BatchOnly extends Subset {
    @Override
    String id() {
      return "ref-b";
    }
  }

  /** {@code PERSISTENT} only (no {@code CHECKSUMS}: rules 12.4 and 12.5 skip with the reason). */
  @Nested
  class PersistentOnly extends Subset {
    @Override
    String id() {
      return "ref-p";
    }
  }

  /** {@code KEYSPACES} only: group 17 without batches, scans or reopen. */
  @Nested
  class KeyspacesOnly extends Subset {
    @Override
    String id() {
      return "ref-k";
    }
  }

  /** {@code KEYSPACES} and {@code ATOMIC_BATCH}: a batch naming another keyspace is refused. */
  @Nested
  class KeyspacesBatches extends Subset {
    @Override
    String id() {
      return "ref-kb";
    }
  }

  /** {@code KEYSPACES}, {@code ATOMIC_BATCH} and {@code KEYSPACE_BATCH}, not persistent. */
  @Nested
  class KeyspaceBatches extends Subset {
    @Override
    String id() {
      return "ref-kx";
    }
  }
}
