package io.sluice.perf;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A strict JSON parser for tests (RFC 8259: objects, arrays, strings, numbers, true, false,
 * null), so the tests check results files with a reader that shares no code with the writer.
 * Objects become {@link LinkedHashMap}s, arrays {@link List}s, numbers {@link Double}s; JSON null
 * becomes {@link #NULL}. Throws {@link IllegalArgumentException} with the offset of the first error.
 */
public final class JsonParser {
  /** Stands for JSON null. */
  public static final Object NULL = new Object();

  private final String text;
  private int pos;

  private JsonParser(String text) {
    this.text = text;
  }

  public static Object parse(String text) {
    JsonParser p = new JsonParser(text);
    p.skipSpace();
    Object v = p.value();
    p.skipSpace();
    if (p.pos != text.length()) {
      throw p.error("trailing characters");
    }
    return v;
  }

  private Object value() {
    if (pos >= text.length()) {
      throw error("unexpected end");
    }
    char c = text.charAt(pos);
    return switch (c) {
      case '{' -> object();
      case '[' -> array();
      case '"' -> string();
      case 't' -> literal("true", Boolean.TRUE);
      case 'f' -> literal("false", Boolean.FALSE);
      case 'n' -> literal("null", NULL);
      default -> number();
    };
  }

  private Map<String, Object> object() {
    Map<String, Object> map = new LinkedHashMap<>();
    pos++;
    skipSpace();
    if (peek('}')) {
      pos++;
      return map;
    }
    while (true) {
      skipSpace();
      if (!peek('"')) {
        throw error("expected a key");
      }
      String key = string();
      skipSpace();
      expect(':');
      skipSpace();
      if (map.put(key, value()) != null) {
        throw error("duplicate key " + key);
      }
      skipSpace();
      if (peek(',')) {
        pos++;
        continue;
      }
      expect('}');
      return map;
    }
  }

  private List<Object> array() {
    List<Object> list = new ArrayList<>();
    pos++;
    skipSpace();
    if (peek(']')) {
      pos++;
      return list;
    }
    while (true) {
      skipSpace();
      list.add(value());
      skipSpace();
      if (peek(',')) {
        pos++;
        continue;
      }
      expect(']');
      return list;
    }
  }

  private String string() {
    expect('"');
    StringBuilder s = new StringBuilder();
    while (true) {
      if (pos >= text.length()) {
        throw error("unterminated string");
      }
      char c = text.charAt(pos++);
      if (c == '"') {
        return s.toString();
      }
      if (c < 0x20) {
        throw error("raw control character in string");
      }
      if (c != '\\') {
        s.append(c);
        continue;
      }
      if (pos >= text.length()) {
        throw error("unterminated escape");
      }
      char e = text.charAt(pos++);
      switch (e) {
        case '"', '\\', '/' -> s.append(e);
        case 'b' -> s.append('\b');
        case 'f' -> s.append('\f');
        case 'n' -> s.append('\n');
        case 'r' -> s.append('\r');
        case 't' -> s.append('\t');
        case 'u' -> {
          if (pos + 4 > text.length()) {
            throw error("short \\u escape");
          }
          s.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
          pos += 4;
        }
        default -> throw error("bad escape \\" + e);
      }
    }
  }

  private Double number() {
    int start = pos;
    if (peek('-')) {
      pos++;
    }
    if (peek('0')) {
      pos++;
    } else {
      digits();
    }
    if (peek('.')) {
      pos++;
      digits();
    }
    if (peek('e') || peek('E')) {
      pos++;
      if (peek('+') || peek('-')) {
        pos++;
      }
      digits();
    }
    return Double.parseDouble(text.substring(start, pos));
  }

  private void digits() {
    int start = pos;
    while (pos < text.length() && text.charAt(pos) >= '0' && text.charAt(pos) <= '9') {
      pos++;
    }
    if (pos == start) {
      throw error("expected a digit");
    }
  }

  private Object literal(String word, Object v) {
    if (!text.startsWith(word, pos)) {
      throw error("expected " + word);
    }
    pos += word.length();
    return v;
  }

  private void skipSpace() {
    while (pos < text.length() && " \t\r\n".indexOf(text.charAt(pos)) >= 0) {
      pos++;
    }
  }

  private boolean peek(char c) {
    return pos < text.length() && text.charAt(pos) == c;
  }

  private void expect(char c) {
    if (!peek(c)) {
      throw error("expected '" + c + "'");
    }
    pos++;
  }

  private IllegalArgumentException error(String what) {
    return new IllegalArgumentException(what + " at offset " + pos);
  }
}
