package io.kv4j.etcd;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The little JSON the etcd gateway answers with: objects become maps, arrays lists, strings and
 * numbers strings (etcd sends 64-bit numbers as strings anyway), true/false booleans, null null.
 */
final class Json {
  private final String s;
  private int i;

  private Json(String s) {
    this.s = s;
  }

  /**
   * Parses one JSON value.
   *
   * @throws IllegalArgumentException on malformed input
   */
  static Object parse(String text) {
    Json j = new Json(text);
    j.space();
    Object v = j.value();
    j.space();
    if (j.i != text.length()) {
      throw j.error("trailing characters");
    }
    return v;
  }

  /** The object of a parsed answer (an empty map when the answer is not an object). */
  @SuppressWarnings("unchecked")
  static Map<String, Object> object(Object o) {
    return o instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
  }

  /** The list under a field (empty when absent). */
  @SuppressWarnings("unchecked")
  static List<Object> list(Map<String, Object> o, String field) {
    return o.get(field) instanceof List<?> l ? (List<Object>) l : List.of();
  }

  /** A numeric field (0 when absent: the gateway omits zero values). */
  static long number(Map<String, Object> o, String field) {
    Object v = o.get(field);
    return v == null ? 0 : Long.parseLong(v.toString());
  }

  private IllegalArgumentException error(String what) {
    return new IllegalArgumentException("malformed JSON from etcd at offset " + i + ": " + what);
  }

  private void space() {
    while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
      i++;
    }
  }

  private Object value() {
    if (i >= s.length()) {
      throw error("unexpected end");
    }
    char c = s.charAt(i);
    switch (c) {
      case '{':
        return obj();
      case '[':
        return arr();
      case '"':
        return str();
      case 't':
        return word("true", Boolean.TRUE);
      case 'f':
        return word("false", Boolean.FALSE);
      case 'n':
        return word("null", null);
      default:
        int start = i;
        while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
          i++;
        }
        if (start == i) {
          throw error("unexpected '" + c + "'");
        }
        return s.substring(start, i);
    }
  }

  private Object word(String w, Object v) {
    if (!s.startsWith(w, i)) {
      throw error("expected " + w);
    }
    i += w.length();
    return v;
  }

  private Map<String, Object> obj() {
    Map<String, Object> m = new LinkedHashMap<>();
    i++;
    space();
    if (i < s.length() && s.charAt(i) == '}') {
      i++;
      return m;
    }
    while (true) {
      space();
      String k = str();
      space();
      expect(':');
      space();
      m.put(k, value());
      space();
      if (i < s.length() && s.charAt(i) == ',') {
        i++;
        continue;
      }
      expect('}');
      return m;
    }
  }

  private List<Object> arr() {
    List<Object> l = new ArrayList<>();
    i++;
    space();
    if (i < s.length() && s.charAt(i) == ']') {
      i++;
      return l;
    }
    while (true) {
      space();
      l.add(value());
      space();
      if (i < s.length() && s.charAt(i) == ',') {
        i++;
        continue;
      }
      expect(']');
      return l;
    }
  }

  private void expect(char c) {
    if (i >= s.length() || s.charAt(i) != c) {
      throw error("expected '" + c + "'");
    }
    i++;
  }

  private String str() {
    expect('"');
    StringBuilder b = null;
    int start = i;
    while (true) {
      if (i >= s.length()) {
        throw error("unterminated string");
      }
      char c = s.charAt(i);
      if (c == '"') {
        String out = b == null ? s.substring(start, i) : b.append(s, start, i).toString();
        i++;
        return out;
      }
      if (c != '\\') {
        i++;
        continue;
      }
      if (b == null) {
        b = new StringBuilder();
      }
      b.append(s, start, i);
      if (i + 1 >= s.length()) {
        throw error("unterminated escape");
      }
      char e = s.charAt(i + 1);
      i += 2;
      switch (e) {
        case 'n' -> b.append('\n');
        case 't' -> b.append('\t');
        case 'r' -> b.append('\r');
        case 'b' -> b.append('\b');
        case 'f' -> b.append('\f');
        case 'u' -> {
          if (i + 4 > s.length()) {
            throw error("short \\u escape");
          }
          b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
          i += 4;
        }
        default -> b.append(e);
      }
      start = i;
    }
  }

  /** Appends a JSON string literal of {@code v} (ASCII-safe). */
  static StringBuilder quote(StringBuilder b, String v) {
    b.append('"');
    for (int k = 0; k < v.length(); k++) {
      char c = v.charAt(k);
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c < 0x20 || c > 0x7e) {
        b.append(String.format("\\u%04x", (int) c));
      } else {
        b.append(c);
      }
    }
    return b.append('"');
  }
}
