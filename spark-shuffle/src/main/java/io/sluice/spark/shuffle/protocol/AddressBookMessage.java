package io.sluice.spark.shuffle.protocol;

import io.sluice.transport.NodeAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The wire format of the driver's transport address book, defined here and nowhere else.
 * Messages are plain strings so that Spark's RPC layer can deserialize them on the driver without
 * loading any class of this module (which the driver may only have in a user class loader).
 *
 * <pre>
 *   register &lt;executorId&gt; &lt;host:port&gt; &lt;provider&gt;   reply: "ok"
 *   opening &lt;executorId&gt;                         reply: "ok"; the executor's transport is opening: until
 *                                               it registers or withdraws, a lookup of it waits
 *   withdraw &lt;executorId&gt;                        reply: "ok"; the executor announced an open that
 *                                               ended without a transport (it failed, or stopped)
 *   lookup &lt;executorId&gt;                          reply: "found &lt;host:port&gt; &lt;provider&gt;" or "unknown";
 *                                               for an executor that announced its open and is still
 *                                               active, sent when it registers or withdraws, or
 *                                               "unknown" after the book's hold time
 *   list                                        reply: one "&lt;executorId&gt; &lt;host:port&gt; &lt;provider&gt;" per line
 *   gone &lt;executorId&gt;...                       reply: "gone" followed by those of the named executors
 *                                               the driver no longer counts as active (removed or
 *                                               being removed), space separated
 *   secret                                      reply: "secret &lt;hex&gt;", the application's transport
 *                                               secret when the driver made one, or "unknown"
 *   metrics &lt;executorId&gt; &lt;name&gt;=&lt;value&gt;...     reply: "ok"; the executor's Sluice metrics now
 *                                               (names as in the READMEs, values whole numbers),
 *                                               which the driver's metrics source adds up
 * </pre>
 */
public final class AddressBookMessage {
  public static final String OK = "ok";
  public static final String UNKNOWN = "unknown";

  private AddressBookMessage() {}

  /** An executor's registered transport endpoint. */
  public record Entry(String executorId, NodeAddress address, String provider) {
    public String encode() {
      return executorId + " " + address + " " + provider;
    }

    public static Entry decode(String line) {
      String[] parts = line.trim().split(" ");
      if (parts.length != 3) {
        throw new IllegalArgumentException("malformed address book entry '" + line + "'");
      }
      return new Entry(parts[0], NodeAddress.parse(parts[1]), parts[2]);
    }
  }

  public static String register(Entry entry) {
    if (entry.executorId().contains(" ") || entry.provider().contains(" ")) {
      throw new IllegalArgumentException("executor id and provider must not contain spaces: " + entry);
    }
    return "register " + entry.encode();
  }

  /** Announces that this executor's transport is opening; the id must not contain spaces. */
  public static String opening(String executorId) {
    checkWord("executor id", executorId);
    return "opening " + executorId;
  }

  /** Withdraws an announced open that ended without a transport; the id must not contain spaces. */
  public static String withdraw(String executorId) {
    checkWord("executor id", executorId);
    return "withdraw " + executorId;
  }

  public static String lookup(String executorId) {
    return "lookup " + executorId;
  }

  public static String list() {
    return "list";
  }

  /** Asks which of these executors are gone; ids must not contain spaces. */
  public static String gone(java.util.Collection<String> executorIds) {
    StringBuilder sb = new StringBuilder("gone");
    for (String id : executorIds) {
      if (id.isEmpty() || id.contains(" ")) {
        throw new IllegalArgumentException("executor id must be non-empty and without spaces: '" + id + "'");
      }
      sb.append(' ').append(id);
    }
    return sb.toString();
  }

  /** The executor ids of a "gone" request or reply. */
  public static java.util.Set<String> decodeGone(String message) {
    if (!message.equals("gone") && !message.startsWith("gone ")) {
      throw new IllegalArgumentException("unexpected address book message '" + message + "'");
    }
    java.util.Set<String> ids = new java.util.LinkedHashSet<>();
    for (String id : message.substring("gone".length()).trim().split(" ")) {
      if (!id.isEmpty()) {
        ids.add(id);
      }
    }
    return ids;
  }

  /** An executor's metrics report: every value it has now, by name. */
  public record MetricsReport(String executorId, Map<String, Long> values) {
    public MetricsReport {
      values = Collections.unmodifiableMap(new LinkedHashMap<>(values));
    }
  }

  /** The report of {@code executorId}'s metrics; ids and names must not contain spaces or '='. */
  public static String metrics(MetricsReport report) {
    checkWord("executor id", report.executorId());
    StringBuilder sb = new StringBuilder("metrics ").append(report.executorId());
    report.values().forEach((name, value) -> {
      checkWord("metric name", name);
      sb.append(' ').append(name).append('=').append(value);
    });
    return sb.toString();
  }

  private static void checkWord(String what, String s) {
    if (s.isEmpty() || s.contains(" ") || s.contains("=") || s.contains("\n")) {
      throw new IllegalArgumentException(what + " must be non-empty, without spaces or '=': '" + s + "'");
    }
  }

  /** Decodes a metrics report. @throws IllegalArgumentException for a malformed one, naming the bad part */
  public static MetricsReport decodeMetrics(String message) {
    if (!message.startsWith("metrics ")) {
      throw new IllegalArgumentException("not a metrics report: '" + message + "'");
    }
    String[] parts = message.substring("metrics ".length()).trim().split(" ");
    if (parts[0].isEmpty()) {
      throw new IllegalArgumentException("metrics report without an executor id");
    }
    Map<String, Long> values = new LinkedHashMap<>();
    for (int i = 1; i < parts.length; i++) {
      int eq = parts[i].indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("malformed metric '" + parts[i] + "' in the report of executor " + parts[0]);
      }
      try {
        values.put(parts[i].substring(0, eq), Long.parseLong(parts[i].substring(eq + 1)));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("metric '" + parts[i] + "' of executor " + parts[0]
            + " is not a whole number", e);
      }
    }
    return new MetricsReport(parts[0], values);
  }

  public static String secret() {
    return "secret";
  }

  /** The reply that hands out the application's transport secret (hex digits, no spaces). */
  public static String secretReply(String secret) {
    if (secret.isEmpty() || !secret.chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
      throw new IllegalArgumentException("a handed-out secret is hex digits");
    }
    return "secret " + secret;
  }

  /** Decodes a secret reply; empty when the driver has none to hand out. */
  public static Optional<String> decodeSecretReply(String reply) {
    if (reply.equals(UNKNOWN)) {
      return Optional.empty();
    }
    if (!reply.startsWith("secret ") || reply.length() == "secret ".length()) {
      throw new IllegalArgumentException("unexpected address book reply to a secret request");
    }
    return Optional.of(reply.substring("secret ".length()));
  }

  public static String found(Entry entry) {
    return "found " + entry.encode();
  }

  /** Decodes a lookup reply. */
  public static Optional<Entry> decodeLookupReply(String reply) {
    if (reply.equals(UNKNOWN)) {
      return Optional.empty();
    }
    if (!reply.startsWith("found ")) {
      throw new IllegalArgumentException("unexpected address book reply '" + reply + "'");
    }
    return Optional.of(Entry.decode(reply.substring("found ".length())));
  }

  public static String encodeList(List<Entry> entries) {
    StringBuilder sb = new StringBuilder();
    for (Entry e : entries) {
      sb.append(e.encode()).append('\n');
    }
    return sb.toString();
  }

  public static List<Entry> decodeList(String reply) {
    List<Entry> out = new ArrayList<>();
    for (String line : reply.split("\n")) {
      if (!line.isBlank()) {
        out.add(Entry.decode(line));
      }
    }
    return out;
  }
}
