package io.kv4j.etcd;

import io.kv4j.StoreException;
import io.kv4j.StoreIOException;
import io.kv4j.etcd.Chunks.Pending;
import io.kv4j.etcd.EtcdClient.Retry;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The write path. Every put, delete, batch and conditional write is published by ONE fenced txn
 * (see {@link EtcdStore#commit}) that writes each key and deletes the key's other chunks (once the
 * store has held a chunked value at all). A value too large for that txn is written first, in
 * chunks under a fresh id ({@link Chunks#write}); the publishing txn then also requires each such
 * value's chunk 0 to be the one written (a concurrent write of the same key deletes it), and puts a
 * manifest instead of the value. If a chunk was disturbed, that value's chunks are written again
 * under a new id and the txn retried; readers never see a manifest whose chunks are not all there.
 */
final class Writes {
  /** Rounds of one write (chunks disturbed by a concurrent write, or a condition re-checked). */
  private static final int ATTEMPTS = 50;

  private final Chunks chunks;

  /**
   * Runs after a write's chunks are in etcd and before the txn that publishes them; a test hook
   * standing for a writer that dies there (it throws).
   */
  volatile Runnable afterChunks = () -> {};

  Writes(Chunks chunks) {
    this.chunks = chunks;
  }

  /** One key's write: its etcd key, its chunk prefix, and its value (null: delete it). */
  record Op(byte[] dataKey, byte[] chunkPrefix, byte[] value) {}

  /**
   * A condition on one key: it holds {@code expected} (null: is absent). etcd compares it as {@code
   * kind} says: absent ({@code CREATE_REVISION = 0}), the inline value ({@code VALUE}), or
   * unmodified since a revision at which this client read it holding {@code expected}.
   */
  record Condition(byte[] dataKey, byte[] chunkPrefix, byte[] expected, Kind kind, long revision) {
    enum Kind {
      ABSENT,
      VALUE,
      MODIFIED
    }

    Condition modifiedAt(long rev) {
      return new Condition(dataKey, chunkPrefix, expected, Kind.MODIFIED, rev);
    }
  }

  /** Writes {@code ops} atomically (one publishing txn), chunking what does not fit in it. */
  void apply(EtcdStore h, String op, List<Op> ops, Set<String> spaces) {
    run(h, op, ops, spaces, List.of(), Retry.ALWAYS);
  }

  /**
   * The condition that {@code dataKey} holds {@code expected} (null: is absent), or null when it
   * surely does not hold. An expected value short enough is compared by etcd ({@code VALUE}); a
   * longer one is read at one revision and compared here, and the write then requires the key
   * unmodified since that revision.
   */
  Condition condition(EtcdStore h, byte[] dataKey, byte[] chunkPrefix, byte[] expected) {
    if (expected == null) {
      return new Condition(dataKey, chunkPrefix, null, Condition.Kind.ABSENT, 0);
    }
    if (expected.length <= chunks.inlineMax) {
      return new Condition(dataKey, chunkPrefix, expected, Condition.Kind.VALUE, 0);
    }
    Reads.Stored now = h.reads.stored(dataKey, 0);
    if (now == null
        || !Arrays.equals(h.reads.decode(now.kv(), now.revision(), chunkPrefix), expected)) {
      return null;
    }
    return new Condition(
        dataKey, chunkPrefix, expected, Condition.Kind.MODIFIED, now.modRevision());
  }

  /**
   * Writes {@code ops} atomically if every condition holds just before (a null condition never
   * holds); answers whether it did. Nothing of a write that answers false is left behind.
   */
  boolean writeIf(EtcdStore h, String op, List<Op> ops, List<Condition> conds, Set<String> spaces) {
    if (conds.contains(null)) {
      return false;
    }
    // Not idempotent: sent again only when it surely never reached a member.
    return run(h, op, ops, spaces, conds, Retry.UNSENT);
  }

  /**
   * After a failed txn whose chunks were intact: the conditions re-read in its failure branch (at
   * its revision), to try again when every one holds, with a value's condition now on its
   * modification revision (its value may be chunked, which etcd cannot compare); null when one does
   * not hold.
   */
  private static List<Condition> recheck(
      EtcdStore h, List<Condition> conds, Map<String, Object> failed) {
    List<Object> responses = Json.list(failed, "responses");
    long revision = Json.number(Json.object(failed.get("header")), "revision");
    List<Condition> next = new ArrayList<>(conds.size());
    for (int i = 0; i < conds.size(); i++) {
      Condition c = conds.get(i);
      List<Object> kvs = Answers.rangeKvs(responses, i);
      if (c.expected() == null) {
        if (!kvs.isEmpty()) {
          return null;
        }
        next.add(c);
      } else if (kvs.isEmpty()
          || !Arrays.equals(h.reads.decode(kvs.get(0), revision, c.chunkPrefix()), c.expected())) {
        return null;
      } else {
        next.add(c.modifiedAt(Json.number(Json.object(kvs.get(0)), "mod_revision")));
      }
    }
    return next;
  }

  private boolean run(
      EtcdStore h,
      String op,
      List<Op> ops,
      Set<String> spaces,
      List<Condition> conds,
      Retry retry) {
    Pending[] pend = plan(h, op, ops, spaces, conds);
    byte[][] inline = new byte[ops.size()][];
    try {
      List<Pending> chunked = present(pend);
      if (!chunked.isEmpty()) {
        h.markChunksUsed();
        chunks.write(h, op, chunked, spaces);
        afterChunks.run();
      }
      for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
        boolean cleanup = h.chunksUsed();
        Txn t = publish(h, ops, pend, inline, conds, cleanup);
        Map<String, Object> r = h.commit(op, t, spaces, retry);
        if (Boolean.TRUE.equals(r.get("succeeded"))) {
          return true;
        }
        List<Object> responses = Json.list(r, "responses");
        if (!cleanup && !Answers.rangeKvs(responses, conds.size()).isEmpty()) {
          h.noteChunksUsed(); // another thread wrote the store's first chunked value meanwhile
          continue;
        }
        List<Pending> disturbed = disturbed(ops, pend, conds.size(), responses);
        if (!disturbed.isEmpty()) {
          chunks.write(h, op, disturbed, spaces);
          continue;
        }
        if (conds.isEmpty()) {
          throw new StoreIOException(
              h.info().describe()
                  + ": "
                  + op
                  + " was refused by etcd with its fences and chunks intact (answer: "
                  + r
                  + ")",
              (Throwable) null);
        }
        conds = recheck(h, conds, r);
        if (conds == null) {
          discard(h, present(pend), spaces);
          return false;
        }
      }
      throw new StoreIOException(
          h.info().describe()
              + ": "
              + op
              + " gave up after "
              + ATTEMPTS
              + " rounds: concurrent writes of the same keys kept replacing its chunks or value",
          (Throwable) null);
    } finally {
      chunks.release(present(pend));
    }
  }

  /**
   * Which values to chunk: those over the inline limit, then the largest others until the
   * publishing txn fits {@code max-request-bytes}; refuses (IllegalArgumentException naming the
   * limit) what cannot fit however chunked.
   */
  private Pending[] plan(
      EtcdStore h, String op, List<Op> ops, Set<String> spaces, List<Condition> conds) {
    Pending[] pend = new Pending[ops.size()];
    try {
      for (int i = 0; i < ops.size(); i++) {
        Op o = ops.get(i);
        if (o.value() != null && o.value().length > chunks.inlineMax) {
          pend[i] = chunks.prepare(o.chunkPrefix(), o.value());
        }
      }
      byte[][] inline = new byte[ops.size()][];
      while (true) {
        boolean cleanup = h.chunksUsed() || !present(pend).isEmpty();
        Txn t = publish(h, ops, pend, inline, conds, cleanup);
        h.fence(t, spaces);
        long over = t.bytes() - h.settings.maxRequestBytes();
        if (over <= 0 || t.width() > h.settings.maxTxnOps() || !chunkMore(ops, pend, over)) {
          t.checkSize(op, h.settings, h.info());
          return pend;
        }
      }
    } catch (RuntimeException e) {
      chunks.release(present(pend));
      throw e;
    }
  }

  /** Chunks the largest inline values whose chunking saves bytes until {@code over} is saved. */
  private boolean chunkMore(List<Op> ops, Pending[] pend, long over) {
    List<Integer> inline = new ArrayList<>();
    for (int i = 0; i < ops.size(); i++) {
      if (pend[i] == null && ops.get(i).value() != null) {
        inline.add(i);
      }
    }
    inline.sort(Comparator.comparingInt((Integer i) -> ops.get(i).value().length).reversed());
    long saved = 0;
    boolean any = false;
    for (int i : inline) {
      Op o = ops.get(i);
      // A manifest, two delete ranges, a compare and a failure read replace the value.
      long saving =
          o.value().length - ValueCodec.MANIFEST_BYTES - 4L * o.chunkPrefix().length - 200;
      if (saved >= over || saving <= 0) {
        break;
      }
      pend[i] = chunks.prepare(o.chunkPrefix(), o.value());
      saved += saving;
      any = true;
    }
    return any;
  }

  /**
   * The publishing txn: the conditions, each chunked value's chunk 0 unchanged; each key written
   * (inline, manifest or deleted) and its other chunks deleted; on failure, reads of the
   * conditions' keys and of each chunk 0 (in that order, before the fences' reads). A store that
   * never held a chunked value ({@code cleanup} false: its marker key is absent) has no chunks to
   * delete, so each key costs one operation of max-txn-ops instead of two; the txn then requires
   * the marker still absent (and reads it on failure, after the conditions' keys).
   */
  private static Txn publish(
      EtcdStore h,
      List<Op> ops,
      Pending[] pend,
      byte[][] inline,
      List<Condition> conds,
      boolean cleanup) {
    Txn t = new Txn();
    for (Condition c : conds) {
      switch (c.kind()) {
        case ABSENT -> t.requireCreated(c.dataKey(), 0);
        case VALUE -> t.requireValue(c.dataKey(), ValueCodec.inline(c.expected()));
        case MODIFIED -> t.requireModified(c.dataKey(), c.revision());
      }
    }
    if (!cleanup) {
      t.requireCreated(h.chunksKey(), 0);
    }
    for (Pending p : present(pend)) {
      t.requireCreated(p.chunk0(), p.chunk0Revision);
    }
    for (int i = 0; i < ops.size(); i++) {
      Op o = ops.get(i);
      byte[] end = ValueCodec.prefixEnd(o.chunkPrefix());
      if (pend[i] != null) {
        Pending p = pend[i];
        t.put(o.dataKey(), p.stored()).deleteRange(o.chunkPrefix(), p.idPrefix);
        t.deleteRange(ValueCodec.prefixEnd(p.idPrefix), end);
        continue;
      }
      if (o.value() == null) {
        t.delete(o.dataKey());
      } else {
        if (inline[i] == null) {
          inline[i] = ValueCodec.inline(o.value());
        }
        t.put(o.dataKey(), inline[i]);
      }
      if (cleanup) {
        t.deleteRange(o.chunkPrefix(), end);
      }
    }
    for (Condition c : conds) {
      t.getOnFailure(c.dataKey());
    }
    if (!cleanup) {
      t.getOnFailure(h.chunksKey());
    }
    for (Pending p : present(pend)) {
      t.getOnFailure(p.chunk0());
    }
    return t;
  }

  /**
   * The values whose chunk 0 is gone or was written again since (a concurrent write of the key
   * deleted their chunks): replaced in {@code pend} by fresh ones, to be written again.
   */
  private List<Pending> disturbed(
      List<Op> ops, Pending[] pend, int conditions, List<Object> responses) {
    int at = conditions;
    List<Pending> again = new ArrayList<>();
    for (int i = 0; i < pend.length; i++) {
      if (pend[i] == null) {
        continue;
      }
      List<Object> kvs = Answers.rangeKvs(responses, at++);
      if (kvs.isEmpty()
          || Json.number(Json.object(kvs.get(0)), "create_revision") != pend[i].chunk0Revision) {
        chunks.release(List.of(pend[i]));
        pend[i] = chunks.prepare(ops.get(i).chunkPrefix(), ops.get(i).value());
        again.add(pend[i]);
      }
    }
    return again;
  }

  /** Deletes the chunks of a write that was not published (best effort: compact() collects). */
  private static void discard(EtcdStore h, List<Pending> written, Set<String> spaces) {
    if (written.isEmpty()) {
      return;
    }
    Txn t = new Txn();
    for (Pending p : written) {
      t.deleteRange(p.idPrefix, ValueCodec.prefixEnd(p.idPrefix));
    }
    try {
      h.commit("discard unpublished chunks", t, spaces, Retry.ALWAYS);
    } catch (StoreException | IllegalArgumentException | IllegalStateException e) {
      // Left for compact(), and for the next write of the key, which deletes its other chunks.
    }
  }

  private static List<Pending> present(Pending[] pend) {
    List<Pending> out = new ArrayList<>();
    for (Pending p : pend) {
      if (p != null) {
        out.add(p);
      }
    }
    return out;
  }
}
