package io.kv4j.etcd;

import io.kv4j.StoreCorruptedException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;

/**
 * The on-etcd format of a store: where its keys live and how a value is stored, inline or as a
 * manifest naming chunks (a value larger than one etcd request can carry is written in several).
 *
 * <p>Keys, under the store's prefix {@code P} (an ASCII string ending in {@code /}); {@code <key>}
 * is the user's key, bytes as given:
 *
 * <table>
 *   <caption>key layout</caption>
 *   <tr><th>etcd key</th><th>holds</th></tr>
 *   <tr><td>{@code P d/<key>}</td><td>a value of the store (format below)</td></tr>
 *   <tr><td>{@code P k/<name>/<key>}</td><td>a value of keyspace {@code name}</td></tr>
 *   <tr><td>{@code P c/d/} area, then {@code <len:2><key><id:16><index:4>}</td><td>chunk {@code
 *       index} of chunked value {@code id} of the store's key {@code key}</td></tr>
 *   <tr><td>{@code P c/k/<name>/} area, then the same</td><td>a chunk of keyspace {@code
 *       name}'s</td></tr>
 *   <tr><td>{@code P m/meta}</td><td>{@code "kv4j-etcd 2"}: the store exists, in this format</td>
 *   </tr>
 *   <tr><td>{@code P m/chunks}</td><td>present once a chunked value was written: until then
 *       no key has chunks, and writes skip deleting them (one txn operation per key, not
 *       two)</td></tr>
 *   <tr><td>{@code P m/lock}</td><td>the open lock (a random token, attached to a lease)</td></tr>
 *   <tr><td>{@code P m/ks/<name>}</td><td>keyspace {@code name} exists (its create revision
 *       fences writes)</td></tr>
 * </table>
 *
 * <p>A chunk key starts with its key's <em>chunk prefix</em>, area + {@code <len:2><key>} ({@code
 * len} big-endian): length-prefixed, so no key's chunk prefix is a prefix of another's, and every
 * chunk of a key is in the range {@code [chunk prefix, prefixEnd(chunk prefix))}. A write of a key
 * deletes that range (but for its own new chunks) in the txn that writes the key, unless the key
 * holds an inline value then, which is how the previous value's chunks go without reading it first.
 * Chunk areas are apart from {@code d/} and {@code k/}, so scans and counts of a data area never
 * see them.
 *
 * <p>A value, at {@code P d/<key>} or {@code P k/<name>/<key>}; integers big-endian:
 *
 * <table>
 *   <caption>value format</caption>
 *   <tr><th>offset</th><th>width</th><th>field</th></tr>
 *   <tr><td>0</td><td>1</td><td>tag: {@code 0} inline, {@code 1} manifest</td></tr>
 *   <tr><td colspan="3">inline:</td></tr>
 *   <tr><td>1</td><td>n</td><td>the value itself (n may be 0)</td></tr>
 *   <tr><td colspan="3">manifest (37 bytes in all):</td></tr>
 *   <tr><td>1</td><td>16</td><td>{@code id}: random, fresh for each write</td></tr>
 *   <tr><td>17</td><td>8</td><td>the value's length in bytes</td></tr>
 *   <tr><td>25</td><td>4</td><td>chunk count</td></tr>
 *   <tr><td>29</td><td>4</td><td>chunk size: chunk {@code i} holds bytes {@code [i * size,
 *       min(length, (i + 1) * size))}</td></tr>
 *   <tr><td>33</td><td>4</td><td>CRC32C of the whole value, checked when it is reassembled</td></tr>
 * </table>
 *
 * <p>A chunk's value is its slice of bytes, untagged. Invariant: at every revision, the chunks a
 * manifest names all exist (the manifest's txn requires its chunk 0, and chunks are deleted only
 * with their manifest or as orphans no manifest names), so a reader that reads a key and its chunks
 * at one revision sees one whole value.
 */
final class ValueCodec {
  /** Stored format, in the store's meta key. */
  static final String FORMAT = "kv4j-etcd 2";

  static final byte INLINE = 0;
  static final byte MANIFEST = 1;

  static final int ID_BYTES = 16;
  static final int MANIFEST_BYTES = 37;

  private ValueCodec() {}

  /** One chunked value: which chunks hold it. */
  record Manifest(byte[] id, long length, int count, int chunkSize, int crc) {
    /** The value's chunk {@code i}: its offset in the value. */
    long offset(int i) {
      return (long) i * chunkSize;
    }

    /** The length of chunk {@code i}. */
    int length(int i) {
      return (int) Math.min(chunkSize, length - offset(i));
    }

    String describe() {
      return "chunked value "
          + HexFormat.of().formatHex(id)
          + " of "
          + length
          + " bytes in "
          + count
          + " chunks of "
          + chunkSize;
    }
  }

  static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static byte[] concat(byte[] a, byte[] b) {
    byte[] c = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, c, a.length, b.length);
    return c;
  }

  /**
   * The first key after every key starting with {@code p}: {@code p} with trailing 0xff bytes
   * dropped and its last byte incremented. {@code p} never consists of 0xff bytes only here (every
   * key this engine builds starts with the ASCII prefix).
   */
  static byte[] prefixEnd(byte[] p) {
    int n = p.length;
    while (n > 0 && p[n - 1] == (byte) 0xff) {
      n--;
    }
    if (n == 0) {
      throw new IllegalArgumentException("no key follows a prefix of 0xff bytes");
    }
    byte[] e = Arrays.copyOf(p, n);
    e[n - 1]++;
    return e;
  }

  /** The chunk area of a handle: {@code P c/d/} for the store, {@code P c/k/<name>/}. */
  static byte[] chunkArea(byte[] prefix, String keyspace) {
    return concat(prefix, bytes(keyspace == null ? "c/d/" : "c/k/" + keyspace + "/"));
  }

  /** Area + {@code <len:2><key>}: every chunk of {@code key} starts with it. */
  static byte[] chunkPrefix(byte[] area, byte[] key) {
    byte[] p = Arrays.copyOf(area, area.length + 2 + key.length);
    p[area.length] = (byte) (key.length >>> 8);
    p[area.length + 1] = (byte) key.length;
    System.arraycopy(key, 0, p, area.length + 2, key.length);
    return p;
  }

  /** Chunk prefix + id: every chunk of one chunked value starts with it. */
  static byte[] idPrefix(byte[] chunkPrefix, byte[] id) {
    return concat(chunkPrefix, id);
  }

  static byte[] chunkKey(byte[] idPrefix, int index) {
    byte[] k = Arrays.copyOf(idPrefix, idPrefix.length + 4);
    ByteBuffer.wrap(k, idPrefix.length, 4).putInt(index);
    return k;
  }

  /**
   * The user key and chunk id of a chunk key of {@code area}, or null when it is not one (too short
   * for its length field).
   */
  static ChunkName parseChunkKey(byte[] area, byte[] chunkKey) {
    int at = area.length;
    if (chunkKey.length < at + 2) {
      return null;
    }
    int len = ((chunkKey[at] & 0xff) << 8) | (chunkKey[at + 1] & 0xff);
    if (chunkKey.length != at + 2 + len + ID_BYTES + 4) {
      return null;
    }
    byte[] key = Arrays.copyOfRange(chunkKey, at + 2, at + 2 + len);
    byte[] id = Arrays.copyOfRange(chunkKey, at + 2 + len, at + 2 + len + ID_BYTES);
    return new ChunkName(key, id);
  }

  /** What a chunk key names: a user key and one of its chunked values. */
  record ChunkName(byte[] key, byte[] id) {
    boolean sameValue(ChunkName o) {
      return o != null && Arrays.equals(key, o.key) && Arrays.equals(id, o.id);
    }
  }

  static byte[] inline(byte[] value) {
    byte[] v = new byte[value.length + 1];
    v[0] = INLINE;
    System.arraycopy(value, 0, v, 1, value.length);
    return v;
  }

  static byte[] manifest(Manifest m) {
    ByteBuffer b = ByteBuffer.allocate(MANIFEST_BYTES);
    b.put(MANIFEST).put(m.id()).putLong(m.length()).putInt(m.count()).putInt(m.chunkSize());
    b.putInt(m.crc());
    return b.array();
  }

  /** Whether a stored value is a manifest (else inline); fails on anything else. */
  static boolean isManifest(byte[] stored, String where) {
    if (stored.length > 0 && stored[0] == INLINE) {
      return false;
    }
    if (stored.length == MANIFEST_BYTES && stored[0] == MANIFEST) {
      return true;
    }
    throw corrupted(
        where,
        "a value of "
            + stored.length
            + " bytes starting with "
            + (stored.length == 0 ? "nothing" : "tag " + (stored[0] & 0xff))
            + ", neither inline (tag 0) nor a "
            + MANIFEST_BYTES
            + "-byte manifest (tag 1)");
  }

  static byte[] inlineValue(byte[] stored) {
    return Arrays.copyOfRange(stored, 1, stored.length);
  }

  static Manifest parseManifest(byte[] stored, String where) {
    ByteBuffer b = ByteBuffer.wrap(stored, 1, MANIFEST_BYTES - 1);
    byte[] id = new byte[ID_BYTES];
    b.get(id);
    Manifest m = new Manifest(id, b.getLong(), b.getInt(), b.getInt(), b.getInt());
    if (m.length() < 0
        || m.chunkSize() <= 0
        || m.count() != (int) ((m.length() + m.chunkSize() - 1) / m.chunkSize())) {
      throw corrupted(where, "a manifest whose sizes disagree: " + m.describe());
    }
    return m;
  }

  static StoreCorruptedException corrupted(String where, String what) {
    return new StoreCorruptedException(where + " holds " + what, null, -1);
  }

  static String printable(byte[] key) {
    return new String(key, StandardCharsets.ISO_8859_1).replaceAll("[^\\x20-\\x7e]", "?");
  }

  static String b64(byte[] b) {
    return Base64.getEncoder().encodeToString(b);
  }
}
