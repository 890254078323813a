package io.sluice.perf.tpcds;

import java.util.HashMap;
import java.util.Map;

/**
 * One query under one shuffle manager, as its driver reported it: wall time of the query including
 * collecting its rows, and Spark's shuffle metrics summed over the query's tasks. Immutable.
 */
record QueryRun(double wallSeconds, long rows, long remoteBytes, long localBytes, long fetchWaitMs,
    long writeBytes) {

  /** Bytes reducers read, remote and local. */
  long readBytes() {
    return remoteBytes + localBytes;
  }

  /** Parses the driver's {@code done <query> key=value ...} answer. */
  static QueryRun parse(String answer) {
    Map<String, Long> v = new HashMap<>();
    String[] parts = answer.split(" ");
    for (int i = 2; i < parts.length; i++) {
      int eq = parts[i].indexOf('=');
      if (eq > 0) {
        v.put(parts[i].substring(0, eq), Long.parseLong(parts[i].substring(eq + 1)));
      }
    }
    for (String k : new String[] {"wall_ns", "rows", "remote_bytes", "local_bytes", "fetch_wait_ms", "write_bytes"}) {
      if (!v.containsKey(k)) {
        throw new IllegalArgumentException("answer lacks " + k + ": " + answer);
      }
    }
    return new QueryRun(v.get("wall_ns") / 1e9, v.get("rows"), v.get("remote_bytes"), v.get("local_bytes"),
        v.get("fetch_wait_ms"), v.get("write_bytes"));
  }
}
