package io.kv4j.lmdb;

import io.kv4j.lmdb.SalvageReport.Loss;
import java.util.ArrayList;
import java.util.List;

/** One tree of the snapshot, as one pass of a salvage walk ({@link SalvageWalk}) walks it. */
final class SalvageTree {
  enum Kind {
    /** LMDB's free-page database: keys are transaction ids, values lists of free pages. */
    FREE,
    /** The main database before the format is known (survey and claims passes). */
    MAIN,
    /** The main database of a store of named databases: the names and their records. */
    NAMES,
    /** A database of the user's entries. */
    DATA
  }

  final Kind kind;
  final long id; // the file offset of the record naming the tree: the same in every pass
  final String keyspace;
  final String label;
  final MetaPages.Db db;
  long seen; // entries met in the pages: handed over or lost one by one
  byte[] lastKey;
  final List<Loss> unknown = new ArrayList<>(); // regions of this tree whose loss is not counted

  SalvageTree(Kind kind, long id, String keyspace, String label, MetaPages.Db db) {
    this.kind = kind;
    this.id = id;
    this.keyspace = keyspace;
    this.label = label;
    this.db = db;
  }
}
