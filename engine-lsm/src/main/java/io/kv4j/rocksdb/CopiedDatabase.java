package io.kv4j.rocksdb;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.LiveFileMetaData;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;

/**
 * The copy a salvage works on ({@link Salvage}) opened read-only with every column family:
 * RocksDB's checks of table files at open are off (paranoid checks, sizes, unique ids), so one
 * damaged table does not stop the open; WAL records that fail their checksum are skipped (the WALs
 * were rewritten without them already); no block cache and no filter, so every lookup reads its
 * blocks and checks them.
 */
final class CopiedDatabase implements AutoCloseable {
  final RocksDB db;
  final List<ColumnFamilyDescriptor> families;
  final List<ColumnFamilyHandle> handles;
  final List<LiveFileMetaData> live;
  private final DBOptions dbOptions;
  private final ColumnFamilyOptions cfOptions;

  private CopiedDatabase(
      RocksDB db,
      List<ColumnFamilyDescriptor> families,
      List<ColumnFamilyHandle> handles,
      DBOptions dbOptions,
      ColumnFamilyOptions cfOptions) {
    this.db = db;
    this.families = families;
    this.handles = handles;
    this.dbOptions = dbOptions;
    this.cfOptions = cfOptions;
    this.live = db.getLiveFilesMetaData();
  }

  /** Opens the copy, or returns null if RocksDB cannot. */
  static CopiedDatabase open(Path copy) {
    Properties p = new Properties();
    p.setProperty("paranoid_checks", "false");
    p.setProperty("wal_recovery_mode", "kSkipAnyCorruptedRecords");
    p.setProperty("skip_checking_sst_file_sizes_on_db_open", "true");
    p.setProperty("skip_stats_update_on_db_open", "true");
    p.setProperty("verify_sst_unique_id_in_manifest", "false");
    p.setProperty("best_efforts_recovery", "false");
    p.setProperty("max_open_files", "-1");
    p.setProperty("info_log_level", "ERROR_LEVEL");
    DBOptions dbo = DBOptions.getDBOptionsFromProps(p);
    if (dbo == null) {
      throw new IllegalStateException("RocksDB rejected the salvage options " + p);
    }
    ColumnFamilyOptions cfo =
        new ColumnFamilyOptions()
            .setTableFormatConfig(new BlockBasedTableConfig().setNoBlockCache(true));
    List<ColumnFamilyDescriptor> families = new ArrayList<>();
    List<ColumnFamilyHandle> handles = new ArrayList<>();
    try (Options o = new Options()) {
      families.add(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, cfo));
      for (byte[] n : RocksDB.listColumnFamilies(o, copy.toString())) {
        if (!Arrays.equals(n, RocksDB.DEFAULT_COLUMN_FAMILY)) {
          families.add(new ColumnFamilyDescriptor(n, cfo));
        }
      }
      RocksDB db = RocksDB.openReadOnly(dbo, copy.toString(), families, handles);
      return new CopiedDatabase(db, families, handles, dbo, cfo);
    } catch (RocksDBException | RuntimeException e) {
      for (ColumnFamilyHandle h : handles) {
        h.close();
      }
      cfo.close();
      dbo.close();
      return null;
    }
  }

  @Override
  public void close() {
    for (ColumnFamilyHandle h : handles) {
      h.close();
    }
    db.close();
    cfOptions.close();
    dbOptions.close();
  }
}
