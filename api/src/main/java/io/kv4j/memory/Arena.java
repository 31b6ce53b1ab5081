package io.kv4j.memory;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Where the memory engine keeps its keys and values: entries appended to byte-array pages and
 * addressed by a location, {@code page << 32 | offset}. A store of millions of entries is then a
 * few hundred arrays that hold no references, instead of two arrays per entry: the collector has
 * nothing to trace or copy per entry, so a young collection's pause does not grow with the writes
 * since the last one (values on the heap cost a 100 ms pause per half-gigabyte young generation
 * under a stream of SETs).
 *
 * <p>An entry, at its location:
 *
 * <table>
 *   <caption>Entry layout (little-endian)</caption>
 *   <tr><th>offset</th><th>width</th><th>field</th></tr>
 *   <tr><td>0</td><td>4</td><td>key length {@code k}</td></tr>
 *   <tr><td>4</td><td>4</td><td>value length {@code v}</td></tr>
 *   <tr><td>8</td><td>k</td><td>key bytes</td></tr>
 *   <tr><td>8 + k</td><td>v</td><td>value bytes</td></tr>
 * </table>
 *
 * <p>Entries are appended to the current page; a page is filled from offset 0 with no gaps, so its
 * entries can be walked. An entry dies when its key is overwritten or removed ({@link #free}); a
 * page whose entries are all dead is released at once. An entry larger than {@link #LARGE} gets a
 * page of its own, released when it dies. Dead bytes in shared pages are reclaimed by {@link
 * KeyTable}'s cleaning, which moves a page's live entries to the current page and then releases it
 * ({@link #wantsCleaning()}, {@link #victim()}). Pages start at {@link #MIN_PAGE} and double with
 * the store up to {@link #MAX_PAGE}, so an empty store costs nothing and a small one little.
 *
 * <p>Not thread-safe: the store's lock guards it. Readers under a read lock only read.
 */
final class Arena {
  static final int MIN_PAGE = 4 << 10;
  static final int MAX_PAGE = 1 << 20;

  /** Entries larger than this get a page of their own. */
  static final int LARGE = MAX_PAGE / 8;

  static final int HEADER = 8;

  /** Dead bytes in shared pages tolerated before cleaning, beside half the live bytes. */
  static final int SLACK = 64 << 10;

  /**
   * Released {@link #MAX_PAGE} pages kept for reuse. Cleaning releases a page for about every page
   * it fills, so a few spares let a store under churn allocate no new page: a new page is born in
   * the young generation and copied by the collector until it is promoted (about 30 ms per young
   * collection under a stream of MSETs), a spare is already old.
   */
  static final int SPARES = 8;

  private static final VarHandle INT =
      MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

  private byte[][] pages = new byte[4][];
  private int[] fill = new int[4]; // bytes appended to each page
  private int[] live = new int[4]; // bytes of each page's live entries
  private boolean[] large = new boolean[4];
  private int[] free = new int[4]; // released page numbers, reused first
  private int freeCount;
  private byte[][] spare = new byte[SPARES][]; // released full-size pages, reused first
  private int spareCount;
  private int used; // page numbers below this have been handed out
  private int current = -1; // the page appended to; -1 before the first append
  private int cleaning = -1; // the page being cleaned: not released until its walk ends
  private long liveBytes; // in shared pages
  private long deadBytes; // in shared pages

  /** The location of the entry at {@code offset} in {@code page}. */
  static long location(int page, int offset) {
    return (long) page << 32 | offset;
  }

  static int pageOf(long location) {
    return (int) (location >>> 32);
  }

  static int offsetOf(long location) {
    return (int) location;
  }

  /** Appends an entry for {@code key} and {@code value}; returns its location. */
  long append(byte[] key, byte[] value) {
    int n = HEADER + key.length + value.length;
    long loc = reserve(n);
    byte[] page = pages[pageOf(loc)];
    int off = offsetOf(loc);
    INT.set(page, off, key.length);
    INT.set(page, off + 4, value.length);
    System.arraycopy(key, 0, page, off + HEADER, key.length);
    System.arraycopy(value, 0, page, off + HEADER + key.length, value.length);
    return loc;
  }

  /** Copies the entry at {@code location} to a new location and frees the old one. */
  long move(long location) {
    byte[] from = pages[pageOf(location)];
    int off = offsetOf(location);
    int n = size(from, off);
    long loc = reserve(n);
    System.arraycopy(from, off, pages[pageOf(loc)], offsetOf(loc), n);
    free(location);
    return loc;
  }

  /** Marks the entry at {@code location} dead; releases its page if nothing in it lives. */
  void free(long location) {
    int p = pageOf(location);
    if (large[p]) {
      release(p);
      return;
    }
    int n = size(pages[p], offsetOf(location));
    live[p] -= n;
    liveBytes -= n;
    deadBytes += n;
    releaseIfEmpty(p);
  }

  /**
   * Writes {@code value} over the value of the entry at {@code location}, which must be of the same
   * length. Only under the store's write lock: readers copy values out under the read lock.
   */
  void overwrite(long location, byte[] value) {
    byte[] page = pages[pageOf(location)];
    int off = offsetOf(location);
    System.arraycopy(value, 0, page, off + HEADER + (int) INT.get(page, off), value.length);
  }

  boolean keyEquals(long location, byte[] key) {
    byte[] page = pages[pageOf(location)];
    int off = offsetOf(location);
    int k = (int) INT.get(page, off);
    return k == key.length
        && Arrays.equals(page, off + HEADER, off + HEADER + k, key, 0, key.length);
  }

  boolean valueEquals(long location, byte[] value) {
    byte[] page = pages[pageOf(location)];
    int off = offsetOf(location);
    int k = (int) INT.get(page, off);
    int v = (int) INT.get(page, off + 4);
    int from = off + HEADER + k;
    return v == value.length && Arrays.equals(page, from, from + v, value, 0, value.length);
  }

  /** A copy of the key at {@code location}. */
  byte[] key(long location) {
    byte[] page = pages[pageOf(location)];
    int off = offsetOf(location);
    int from = off + HEADER;
    return Arrays.copyOfRange(page, from, from + (int) INT.get(page, off));
  }

  /** A copy of the value at {@code location}. */
  byte[] value(long location) {
    byte[] page = pages[pageOf(location)];
    int off = offsetOf(location);
    int from = off + HEADER + (int) INT.get(page, off);
    return Arrays.copyOfRange(page, from, from + (int) INT.get(page, off + 4));
  }

  int valueLength(long location) {
    return (int) INT.get(pages[pageOf(location)], offsetOf(location) + 4);
  }

  /** The hash word of the key at {@code location}: {@link KeyTable#hash} of its bytes. */
  int keyHash(long location) {
    byte[] page = pages[pageOf(location)];
    int from = offsetOf(location) + HEADER;
    return KeyTable.hash(page, from, from + (int) INT.get(page, from - HEADER));
  }

  /** Whether shared pages hold more dead bytes than half their live bytes, and than the slack. */
  boolean wantsCleaning() {
    return deadBytes > SLACK && deadBytes > liveBytes / 2;
  }

  /**
   * The shared page, other than the current one, with the smallest share of live bytes among those
   * with dead ones, or -1 if there is none.
   */
  int victim() {
    int best = -1;
    for (int p = 0; p < used; p++) {
      if (pages[p] == null || large[p] || p == current || live[p] == fill[p]) {
        continue;
      }
      if (best < 0 || (long) live[p] * fill[best] < (long) live[best] * fill[p]) {
        best = p;
      }
    }
    return best;
  }

  /** Starts cleaning {@code page}: it is not released while its entries are walked and moved. */
  void startCleaning(int page) {
    cleaning = page;
  }

  /** Ends the cleaning of the page, releasing it; every entry in it must be dead. */
  void endCleaning() {
    int p = cleaning;
    cleaning = -1;
    if (live[p] != 0) {
      throw new IllegalStateException("page " + p + " still holds " + live[p] + " live bytes");
    }
    release(p);
  }

  /** Releases every page. */
  void clear() {
    pages = new byte[4][];
    fill = new int[4];
    live = new int[4];
    large = new boolean[4];
    free = new int[4];
    freeCount = 0;
    spare = new byte[SPARES][];
    spareCount = 0;
    used = 0;
    current = -1;
    cleaning = -1;
    liveBytes = 0;
    deadBytes = 0;
  }

  /** The bytes appended to {@code page}; its entries lie back to back from offset 0. */
  int fill(int page) {
    return fill[page];
  }

  /** The length of the entry at {@code location}, header included. */
  int size(long location) {
    return size(pages[pageOf(location)], offsetOf(location));
  }

  /** Live bytes in shared pages (tests). */
  long liveBytes() {
    return liveBytes;
  }

  /** Dead bytes in shared pages (tests). */
  long deadBytes() {
    return deadBytes;
  }

  /** Bytes of every page held, shared, large and spare (tests and stats). */
  long heldBytes() {
    long n = (long) spareCount * MAX_PAGE;
    for (int p = 0; p < used; p++) {
      if (pages[p] != null) {
        n += pages[p].length;
      }
    }
    return n;
  }

  private static int size(byte[] page, int off) {
    return HEADER + (int) INT.get(page, off) + (int) INT.get(page, off + 4);
  }

  /** Reserves {@code n} bytes for an entry; returns their location. */
  private long reserve(int n) {
    if (n > LARGE) {
      int p = newPage(n);
      large[p] = true;
      fill[p] = n;
      live[p] = n;
      return location(p, 0);
    }
    if (current < 0 || pages[current].length - fill[current] < n) {
      int size = MIN_PAGE;
      while (size < MAX_PAGE && (size < n || size < (liveBytes + deadBytes) / 8)) {
        size <<= 1;
      }
      int old = current;
      current = newPage(size);
      if (old >= 0) {
        releaseIfEmpty(old);
      }
    }
    int p = current;
    int off = fill[p];
    fill[p] = off + n;
    live[p] += n;
    liveBytes += n;
    return location(p, off);
  }

  private int newPage(int size) {
    // The array first: an OutOfMemoryError then leaves the page numbers as they were.
    byte[] page = size == MAX_PAGE && spareCount > 0 ? spare[--spareCount] : new byte[size];
    int p;
    if (freeCount > 0) {
      p = free[--freeCount];
    } else {
      if (used == pages.length) {
        int n = used * 2;
        pages = Arrays.copyOf(pages, n);
        fill = Arrays.copyOf(fill, n);
        live = Arrays.copyOf(live, n);
        large = Arrays.copyOf(large, n);
        free = Arrays.copyOf(free, n);
      }
      p = used++;
    }
    pages[p] = page;
    fill[p] = 0;
    live[p] = 0;
    large[p] = false;
    return p;
  }

  /** Releases shared page {@code p} if nothing in it lives and no append or cleaning holds it. */
  private void releaseIfEmpty(int p) {
    if (live[p] == 0 && p != current && p != cleaning) {
      release(p);
    }
  }

  private void release(int p) {
    if (!large[p]) {
      deadBytes -= fill[p] - live[p];
      liveBytes -= live[p];
    }
    if (pages[p].length == MAX_PAGE && spareCount < SPARES) {
      spare[spareCount++] = pages[p]; // its bytes are stale; nothing reads past a page's fill
    }
    pages[p] = null;
    fill[p] = 0;
    live[p] = 0;
    large[p] = false;
    free[freeCount++] = p;
  }
}
