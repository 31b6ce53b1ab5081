package io.kv4j.lmdb;

import io.kv4j.Store;
import io.kv4j.lmdb.SalvagePage.Node;
import io.kv4j.lmdb.SalvageReport.Loss;
import io.kv4j.lmdb.SalvageTree.Kind;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The main database as a salvage walk ({@link SalvageWalk}) reads it for its records of named
 * databases: in a store of named databases, the list of keyspaces, whose leaves hold one 48-byte
 * record per database. Collects the records ({@link #records}), checks each, and walks (rescue) the
 * databases they record.
 */
final class KeyspaceList {
  private static final byte[] OWN = Keyspaces.OWN.getBytes(StandardCharsets.US_ASCII);

  /**
   * A named database's record found in the main database: its name (null for the store's own keys),
   * the record and where it lies, what is wrong with its name ({@code problem}, or null) and with
   * its node's header ({@code note}: the record was read all the same, or null).
   */
  record Named(
      String name,
      byte[] rawName,
      MetaPages.Db db,
      long at,
      long nodeAt,
      int nodeLength,
      String problem,
      String note) {}

  final List<Named> records = new ArrayList<>();
  private final SalvageWalk walk;

  KeyspaceList(SalvageWalk walk) {
    this.walk = walk;
  }

  /**
   * Walks (rescue) the databases the list of keyspaces records, and reports the records it cannot
   * walk. Without a database named {@value Keyspaces#OWN}, in an otherwise intact list, the one
   * database whose name is one bit off it is taken for the store's own keys: a flipped bit in a
   * name is the likeliest damage, and kv4j writes no such keyspace name beside {@value
   * Keyspaces#OWN}.
   */
  void namedTrees(long metaAt, boolean listIntact) {
    boolean own = false;
    Named standIn = null;
    int offByOne = 0;
    for (Named r : records) {
      own |= r.problem() == null && Arrays.equals(r.rawName(), OWN);
      if (oneBitOff(r.rawName(), OWN)) {
        standIn = r;
        offByOne++;
      }
    }
    if (own || !listIntact || offByOne != 1) {
      standIn = null;
    }
    for (Named r : records) {
      if (r.note() != null) {
        walk.report.losses.add(new Loss(r.nodeAt(), r.nodeLength(), null, 0, null, r.note()));
      }
      String keyspace = r.name();
      if (r == standIn) {
        keyspace = null;
        walk.report.losses.add(
            new Loss(
                r.nodeAt(),
                r.nodeLength(),
                null,
                0,
                null,
                "the list of keyspaces names no database '"
                    + Keyspaces.OWN
                    + "' but one named '"
                    + new String(r.rawName(), StandardCharsets.ISO_8859_1)
                    + "', one bit off: its entries were read as the store's own keys"));
      } else if (r.problem() != null) {
        walk.report.losses.add(
            new Loss(
                r.nodeAt(),
                r.nodeLength(),
                null,
                Math.max(r.db().entries(), -1),
                null,
                "the name of a keyspace (bytes "
                    + java.util.HexFormat.of().formatHex(r.rawName())
                    + ") "
                    + r.problem()
                    + ": it is damaged, and the keyspace's entries are lost"));
        continue;
      }
      String label = keyspace == null ? "the store's own keys" : "keyspace '" + keyspace + "'";
      SalvageTree t = new SalvageTree(Kind.DATA, r.at(), keyspace, label, r.db());
      walk.walk(t);
      walk.finish(t);
    }
    if (!own && standIn == null && listIntact) {
      walk.report.losses.add(
          new Loss(
              metaAt + MetaPages.MAIN_DB,
              PageWalk.DB_RECORD,
              null,
              -1,
              null,
              "the list of keyspaces names no database '"
                  + Keyspaces.OWN
                  + "', which holds the store's own keys: they are lost"));
    }
  }

  private static boolean oneBitOff(byte[] a, byte[] b) {
    if (a.length != b.length) {
      return false;
    }
    int bits = 0;
    for (int i = 0; i < a.length; i++) {
      bits += Integer.bitCount((a[i] ^ b[i]) & 0xFF);
    }
    return bits == 1;
  }

  boolean holdsOwn() {
    for (Named r : records) {
      if (Arrays.equals(r.rawName, OWN)) {
        return true;
      }
    }
    return false;
  }

  /** Survey and claims passes over a leaf of the main database, before the format is known. */
  void mainSurvey(SalvageTree t, SalvagePage p, Node[] nodes) {
    for (Node nd : nodes) {
      if (nd.key == null) {
        continue;
      }
      if (recordNode(p, nd)) {
        MetaPages.Db db = MetaPages.db(p.b, nd.dataAt);
        if (db.isEmpty() || (db.root() >= 2 && db.root() <= walk.lastPage)) {
          String name =
              Arrays.equals(nd.key, OWN) ? null : new String(nd.key, StandardCharsets.UTF_8);
          records.add(
              new Named(
                  name, nd.key, db, p.offset + nd.dataAt, p.offset + nd.at, nd.extent, null, null));
        }
      } else if (nd.problem == null) {
        walk.entries.dataNode(t, p, nd);
      }
    }
  }

  /**
   * Whether a node of the main database holds a database record: flagged as one (LMDB's {@code
   * F_SUBDATA}) with room for its 48 bytes. Its size field may be damaged; the record's own checks
   * follow.
   */
  private boolean recordNode(SalvagePage p, Node nd) {
    return (nd.flags & PageWalk.F_SUBDATA) != 0
        && (nd.flags & PageWalk.F_BIGDATA) == 0
        && nd.dataAt + PageWalk.DB_RECORD <= walk.psize;
  }

  /**
   * A leaf of the main database in a store of named databases: one record per database, collected
   * in {@link #records} for {@link #namedTrees} to walk (or report).
   */
  void namesLeaf(SalvageTree t, SalvagePage p, Node[] nodes, byte[] lo, byte[] hi) {
    boolean explained = false;
    for (Node nd : nodes) {
      explained |=
          nd.problem != null || nd.flags != PageWalk.F_SUBDATA || nd.lohi != PageWalk.DB_RECORD;
    }
    walk.report.layout(t, p, explained, lo, hi);
    for (int i = 0; i < nodes.length; i++) {
      t.seen++;
      Node nd = nodes[i];
      boolean record = nd.key != null && recordNode(p, nd);
      String why = record ? null : nd.problem;
      if (why == null && !record) {
        why = "node " + i + " of page " + p.pgno + " is not a database record";
      }
      MetaPages.Db db = why == null ? MetaPages.db(p.b, nd.dataAt) : null;
      if (why == null) {
        why = recordProblem(db);
      }
      if (why != null) {
        walk.report.losses.add(
            new Loss(
                p.offset + nd.at,
                nd.extent,
                null,
                -1,
                null,
                why + "; the keyspace it records is lost, its name unknown"));
        continue;
      }
      String note =
          nd.flags != PageWalk.F_SUBDATA || nd.lohi != PageWalk.DB_RECORD
              ? "the header of node "
                  + i
                  + " of page "
                  + p.pgno
                  + " is damaged (flags 0x"
                  + Integer.toHexString(nd.flags)
                  + ", size "
                  + nd.lohi
                  + "); its 48-byte database record was read all the same"
              : null;
      String recordNote = recordNote(db);
      if (recordNote != null) {
        note =
            (note == null ? "" : note + "; ")
                + "the database record in node "
                + i
                + " of page "
                + p.pgno
                + " holds "
                + recordNote
                + "; its tree was read all the same";
      }
      String name =
          Arrays.equals(nd.key, OWN) ? null : new String(nd.key, StandardCharsets.ISO_8859_1);
      String problem = null;
      if (name != null) {
        try {
          Store.checkKeyspaceName(name);
        } catch (IllegalArgumentException e) {
          problem = "is not a keyspace name";
        }
      }
      if (problem == null && t.lastKey != null && Arrays.compareUnsigned(nd.key, t.lastKey) <= 0) {
        problem = "is out of order";
      }
      if (problem == null) {
        t.lastKey = nd.key;
      }
      records.add(
          new Named(
              problem == null ? name : null,
              nd.key,
              db,
              p.offset + nd.dataAt,
              p.offset + nd.at,
              nd.extent,
              problem,
              note));
    }
  }

  /** What makes a database record unusable: a root that is not a page in use. */
  private String recordProblem(MetaPages.Db db) {
    if (!db.isEmpty() && (db.root() < 2 || db.root() > walk.lastPage)) {
      return "a database record's root page "
          + db.root()
          + " lies outside pages 2.."
          + walk.lastPage;
    }
    return null;
  }

  /** What is damaged in a database record besides its root: reported, the tree is read anyway. */
  private static String recordNote(MetaPages.Db db) {
    if (db.flags() != 0) {
      return "flags 0x" + Integer.toHexString(db.flags()) + " that this store never sets";
    }
    if (db.entries() < 0) {
      return "a count of " + db.entries() + " entries";
    }
    return null;
  }
}
