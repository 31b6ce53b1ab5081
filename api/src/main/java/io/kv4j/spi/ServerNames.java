package io.kv4j.spi;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Objects;

/**
 * Names for stores whose data lives on a server (a SQL table, a Redis key prefix), where the store
 * path only names the data: one stable, server-safe name per absolute path, the same on every run
 * and every machine. Shared by the server engines so that they derive names one way.
 */
public final class ServerNames {
  private ServerNames() {}

  /**
   * The name for a store path: {@code kv4j<separator><last path element><separator><16 hex digits
   * of the SHA-256 of the absolute, normalised path>}. The path element is lower-cased; each run of
   * characters other than {@code a-z}, {@code 0-9} and those in {@code alsoAllowed} becomes one
   * {@code _}; then it is cut to {@code maxElement} characters. The root path's element is {@code
   * root}. The hash keeps paths apart whose elements look alike ({@code /a/x} and {@code /b/x}).
   *
   * <p>For example the SQL engines use {@code forPath(path, '_', "", 24)} ({@code
   * kv4j_orders_0123456789abcdef}), the Redis engine {@code forPath(path, ':', "._-", 32)}.
   *
   * @param path the store path
   * @param separator the character between the parts
   * @param alsoAllowed characters kept besides {@code a-z 0-9}
   * @param maxElement the most characters kept of the path element, at least 1
   * @return the name, at most {@code 22 + maxElement} characters
   */
  public static String forPath(Path path, char separator, String alsoAllowed, int maxElement) {
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(alsoAllowed, "alsoAllowed");
    if (maxElement < 1) {
      throw new IllegalArgumentException("maxElement must be at least 1, not " + maxElement);
    }
    String abs = path.toAbsolutePath().normalize().toString();
    Path last = path.getFileName();
    String name = sanitise(last == null ? "root" : last.toString(), alsoAllowed);
    if (name.length() > maxElement) {
      name = name.substring(0, maxElement);
    }
    return "kv4j" + separator + name + separator + sha256Hex(abs, 16);
  }

  /**
   * Lower-cases {@code text} and replaces each run of characters other than {@code a-z}, {@code
   * 0-9} and those in {@code alsoAllowed} with one {@code _}.
   *
   * @param text any text
   * @param alsoAllowed characters kept besides {@code a-z 0-9}
   * @return the sanitised text, never longer than {@code text} lower-cased
   */
  public static String sanitise(String text, String alsoAllowed) {
    String lower = text.toLowerCase(Locale.ROOT);
    StringBuilder sb = new StringBuilder(lower.length());
    boolean inRun = false;
    for (int i = 0; i < lower.length(); i++) {
      char c = lower.charAt(i);
      boolean keep =
          (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || alsoAllowed.indexOf(c) >= 0;
      if (keep) {
        sb.append(c);
        inRun = false;
      } else if (!inRun) {
        sb.append('_');
        inRun = true;
      }
    }
    return sb.toString();
  }

  /**
   * The first {@code hexDigits} lower-case hex digits of the SHA-256 of {@code text} in UTF-8.
   *
   * @param text the text to hash
   * @param hexDigits how many digits, an even number from 2 to 64
   * @return the digits
   */
  public static String sha256Hex(String text, int hexDigits) {
    Objects.requireNonNull(text, "text");
    if (hexDigits < 2 || hexDigits > 64 || hexDigits % 2 != 0) {
      throw new IllegalArgumentException(
          "hexDigits must be an even number from 2 to 64, not " + hexDigits);
    }
    try {
      byte[] h = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(h, 0, hexDigits / 2);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }
}
