package com.example.app;

import io.kv4j.Cursor;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.nio.charset.StandardCharsets;

/**
 * The README's "Use it" example: {@code java -cp ... com.example.app.Main URI}, for example {@code
 * hashlog:/tmp/app-data}. README.md shows this file verbatim, and a test checks that it still does.
 */
public final class Main {
  private Main() {}

  /**
   * Opens the store named by the URI, writes, reads and scans it, printing what it sees.
   *
   * @param args one argument: the store URI
   */
  public static void main(String[] args) {
    String uri = args.length > 0 ? args[0] : "hashlog:/tmp/kv4j-example?durability=buffered";
    try (Store store = Stores.open(uri)) { // e.g. "hashlog:/var/lib/app/data?durability=buffered"
      store.put(utf8("user:1"), utf8("Ada"));
      byte[] v = store.get(utf8("user:1")); // null when absent; byte[0] is a value
      System.out.println("user:1 = " + new String(v, StandardCharsets.UTF_8));
      store.write(
          new WriteBatch() // atomic: all or nothing, also across crashes
              .put(utf8("user:2"), utf8("Grace"))
              .put(utf8("user:3"), utf8("Barbara"))
              .delete(utf8("user:1")));
      try (Cursor c = store.scan(KeyRange.prefix(utf8("user:")))) { // unsigned byte order
        while (c.hasNext()) {
          Entry e = c.next();
          System.out.println(new String(e.key(), StandardCharsets.UTF_8));
        }
      }
      store.forEach( // "a" <= key < "v", highest first, at most 10
          KeyRange.all().gte(utf8("a")).lt(utf8("v")).reverse().limit(10),
          e -> System.out.println("reverse: " + new String(e.key(), StandardCharsets.UTF_8)));
    }
  }

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
