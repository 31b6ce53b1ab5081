package io.kv4j.bench.raw;

import io.kv4j.Cursor;
import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreInfo;
import io.kv4j.StoreStats;
import io.kv4j.WriteBatch;
import io.kv4j.spi.OptionSpec;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.lmdbjava.CursorIterable;
import org.lmdbjava.Dbi;
import org.lmdbjava.DbiFlags;
import org.lmdbjava.Env;
import org.lmdbjava.EnvFlags;
import org.lmdbjava.Txn;

/**
 * LMDB (lmdbjava) used directly ({@code lmdb-raw}), with the settings of the kv4j {@code lmdb}
 * engine at its defaults, except the map: 64 GiB ({@code map-size}), never grown. The engine starts
 * at 1 GiB and grows; a fixed 1 GiB map filled up in the timed insert runs of a quiet {@code
 * --abstraction} run (ycsb-d/e/f, MapFullException), and without {@code MDB_WRITEMAP} a map is
 * address space only: the file grows with the data either way. 1024 readers, {@code MDB_NOTLS},
 * {@code MDB_NOSYNC} under BUFFERED. The usual lmdbjava code: the optimal {@code ByteBuffer} proxy
 * with per-thread direct buffers, a read transaction per get, a write transaction and commit per
 * put (no group commit).
 */
public final class LmdbRawProvider extends RawProvider {
  static final OptionSpec<Long> MAP_SIZE =
      OptionSpec.size(
          "map-size", 64L << 30, 1L << 20, 1L << 44, "LMDB map size (address space; never grown)");

  /** Creates the provider; called by the bench's {@code Instruments} and the TCK's child JVMs. */
  public LmdbRawProvider() {
    super(
        "lmdb-raw", "Bench baseline: LMDB through lmdbjava directly, the lmdb engine's settings.");
  }

  @Override
  public List<OptionSpec<?>> options() {
    return List.of(MAP_SIZE);
  }

  @Override
  public Store open(StoreConfig config) {
    return new RawLmdb(config);
  }

  /** A thread's direct buffers for keys and values, grown as needed. */
  private static final class Buffers {
    ByteBuffer key = ByteBuffer.allocateDirect(511);
    ByteBuffer value = ByteBuffer.allocateDirect(4096);

    ByteBuffer key(byte[] k) {
      key.clear();
      return key.put(k).flip();
    }

    ByteBuffer value(byte[] v) {
      if (value.capacity() < v.length) {
        value = ByteBuffer.allocateDirect(Math.max(v.length, value.capacity() * 2));
      }
      value.clear();
      return value.put(v).flip();
    }
  }

  private static final ThreadLocal<Buffers> BUFFERS = ThreadLocal.withInitial(Buffers::new);

  private static byte[] bytes(ByteBuffer b) {
    byte[] out = new byte[b.remaining()];
    b.get(out);
    return out;
  }

  private static final class RawLmdb implements Store {
    private final StoreConfig config;
    private final Env<ByteBuffer> env;
    private final Dbi<ByteBuffer> db;

    RawLmdb(StoreConfig config) {
      this.config = config;
      List<EnvFlags> flags = new ArrayList<>(List.of(EnvFlags.MDB_NOTLS));
      if (config.durability() == Durability.BUFFERED) {
        flags.add(EnvFlags.MDB_NOSYNC);
      }
      env =
          Env.create()
              .setMapSize(config.get(MAP_SIZE))
              .setMaxReaders(1024)
              .setMaxDbs(1)
              .open(
                  Raw.directory(config.path(), "lmdb-raw").toFile(),
                  0644,
                  flags.toArray(new EnvFlags[0]));
      db = env.openDbi((byte[]) null, DbiFlags.MDB_CREATE);
    }

    @Override
    public byte[] get(byte[] key) {
      Buffers b = BUFFERS.get();
      try (Txn<ByteBuffer> txn = env.txnRead()) {
        ByteBuffer v = db.get(txn, b.key(key));
        return v == null ? null : bytes(v);
      }
    }

    @Override
    public void put(byte[] key, byte[] value) {
      Buffers b = BUFFERS.get();
      try (Txn<ByteBuffer> txn = env.txnWrite()) {
        db.put(txn, b.key(key), b.value(value));
        txn.commit();
      }
    }

    @Override
    public void delete(byte[] key) {
      Buffers b = BUFFERS.get();
      try (Txn<ByteBuffer> txn = env.txnWrite()) {
        db.delete(txn, b.key(key));
        txn.commit();
      }
    }

    @Override
    public Cursor scan(KeyRange range) {
      Txn<ByteBuffer> txn = env.txnRead();
      CursorIterable<ByteBuffer> it;
      if (range.lower() == null) {
        it = db.iterate(txn);
      } else {
        ByteBuffer from = ByteBuffer.allocateDirect(range.lower().length);
        from.put(range.lower()).flip();
        it = db.iterate(txn, org.lmdbjava.KeyRange.atLeast(from));
      }
      var iter = it.iterator();
      return new RawCursor(range) {
        @Override
        Entry fetch() {
          if (!iter.hasNext()) {
            return null;
          }
          CursorIterable.KeyVal<ByteBuffer> kv = iter.next();
          return new Entry(bytes(kv.key()), bytes(kv.val()));
        }

        @Override
        void release() {
          it.close();
          txn.close();
        }
      };
    }

    @Override
    public void write(WriteBatch batch) {
      try (Txn<ByteBuffer> txn = env.txnWrite()) {
        for (int i = 0; i < batch.size(); i++) {
          Buffers b = BUFFERS.get();
          if (batch.isDelete(i)) {
            db.delete(txn, b.key(batch.key(i)));
          } else {
            db.put(txn, b.key(batch.key(i)), b.value(batch.value(i)));
          }
        }
        txn.commit();
      }
    }

    @Override
    public void sync() {
      env.sync(true);
    }

    @Override
    public StoreInfo info() {
      return RawProvider.info("lmdb-raw", config);
    }

    @Override
    public StoreStats stats() {
      return new StoreStats(0, false, Raw.du(config.path()), Map.of());
    }

    @Override
    public void close() {
      db.close();
      env.close();
    }
  }
}
