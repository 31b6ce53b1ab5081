package io.kv4j.lmdb;

import io.kv4j.Durability;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreException;
import io.kv4j.Stores;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;

/**
 * Run in a child JVM by {@link LmdbDamageTest}: opens each damaged store directory given and checks
 * the damage contract, printing one line per case. A native crash kills only this process; the
 * parent then knows the case from the last BEGIN line.
 */
public final class LmdbDamageMain {
  /** Keys written by {@link #write}. */
  static final int KEYS = 3000;

  private LmdbDamageMain() {}

  static byte[] key(int i) {
    return String.format("key-%06d", i).getBytes(StandardCharsets.UTF_8);
  }

  /** Whether key i is deleted after being written. */
  static boolean deleted(int i) {
    return i % 17 == 3;
  }

  /** Value of key i: mostly small, every 97th spans overflow pages. */
  static byte[] value(int i) {
    Random r = new Random(i * 7919L);
    byte[] v = new byte[i % 97 == 0 ? 3000 + r.nextInt(9000) : 20 + r.nextInt(200)];
    r.nextBytes(v);
    return v;
  }

  static StoreConfig config(Path dir) {
    return StoreConfig.builder("lmdb").path(dir).durability(Durability.SYNC).build();
  }

  /** Writes the reference store (in batches, so it stays quick under SYNC) and closes it. */
  static void write(Path dir) {
    try (Store s = Stores.open(config(dir))) {
      io.kv4j.WriteBatch b = new io.kv4j.WriteBatch();
      for (int i = 0; i < KEYS; i++) {
        b.put(key(i), value(i));
        if (b.size() == 200) {
          s.write(b);
          b = new io.kv4j.WriteBatch();
        }
      }
      s.write(b);
      b = new io.kv4j.WriteBatch();
      for (int i = 0; i < KEYS; i++) {
        if (deleted(i)) {
          b.delete(key(i));
        }
      }
      s.write(b);
    }
  }

  /**
   * Checks each directory.
   *
   * @param args directories, each a damaged copy of the reference store
   */
  public static void main(String[] args) {
    for (String a : args) {
      System.out.println("BEGIN " + a);
      System.out.flush();
      String verdict;
      try {
        verdict = check(Path.of(a));
      } catch (Throwable t) {
        verdict = "FAIL unexpected " + t;
        t.printStackTrace(System.out);
      }
      System.out.println("END " + a + " " + verdict);
      System.out.flush();
    }
  }

  private static String check(Path dir) {
    Store s;
    try {
      s = Stores.open(config(dir));
    } catch (StoreException e) {
      return "OK open-failed " + e.getClass().getSimpleName() + ": " + e.getMessage();
    }
    try (s) {
      int exact = 0;
      int reported = 0;
      int nulls = 0;
      for (int i = 0; i < KEYS; i++) {
        byte[] v;
        try {
          v = s.get(key(i));
        } catch (StoreCorruptedException e) {
          reported++;
          continue;
        }
        if (deleted(i)) {
          if (v != null) {
            return "FAIL deleted key " + i + " read a value";
          }
          exact++;
        } else if (v == null) {
          nulls++;
        } else if (!Arrays.equals(v, value(i))) {
          return "FAIL key " + i + " read a wrong value";
        } else {
          exact++;
        }
      }
      boolean scanReported = false;
      long scanned = 0;
      try (io.kv4j.Cursor c = s.scan(KeyRange.all())) {
        while (c.hasNext()) {
          Entry e = c.next();
          String k = new String(e.key(), StandardCharsets.UTF_8);
          int i;
          try {
            i = k.startsWith("key-") && k.length() == 10 ? Integer.parseInt(k.substring(4)) : -1;
          } catch (NumberFormatException ex) {
            i = -1;
          }
          if (i < 0 || i >= KEYS || deleted(i)) {
            return "FAIL scan returned a key never written (or deleted): " + k;
          }
          if (!Arrays.equals(e.value(), value(i))) {
            return "FAIL scan returned a wrong value for " + k;
          }
          scanned++;
        }
      } catch (StoreCorruptedException e) {
        scanReported = true;
      }
      boolean verifyReported = false;
      try {
        s.verify();
      } catch (StoreCorruptedException e) {
        verifyReported = true;
      }
      if (nulls > 0 && !scanReported && !verifyReported) {
        return "FAIL "
            + nulls
            + " keys read as absent, but neither scan nor verify reported damage";
      }
      if ((reported > 0 || scanReported) && !verifyReported) {
        return "FAIL reads reported damage that verify did not find";
      }
      return "OK opened: exact="
          + exact
          + " reported="
          + reported
          + " absent="
          + nulls
          + " scanned="
          + scanned
          + (scanReported ? " scan-reported" : "")
          + (verifyReported ? " verify-reported" : "");
    }
  }
}
