package io.sluice.perf.transport;

import io.sluice.perf.bench.ByteSize;

/** The one place that spells the measurement names of the transport benchmark. */
final class Names {
  static final String GBPS = "GB/s";
  static final String MICROS = "us";

  private Names() {}

  static String readThroughput(String provider, int block, int depth) {
    return provider + ".read." + ByteSize.label(block) + ".inflight" + depth;
  }

  static String readLatency(String provider, int size) {
    return provider + ".read." + ByteSize.label(size) + ".latency";
  }

  static String readLatency(String provider, int size, Percentile p) {
    return readLatency(provider, size) + "." + p.label();
  }

  static String connectLatency(String provider) {
    return provider + ".connect.latency";
  }

  static String connectLatency(String provider, Percentile p) {
    return connectLatency(provider) + "." + p.label();
  }

  static String socketStream(int block) {
    return "socket.stream." + ByteSize.label(block);
  }

  static String socketPingPong(int size) {
    return "socket.pingpong." + ByteSize.label(size);
  }

  static String socketPingPong(int size, Percentile p) {
    return socketPingPong(size) + "." + p.label();
  }

  static String shmAllocate(int block) {
    return "shm.allocate." + ByteSize.label(block);
  }

  static String sparseAllocate(int block) {
    return "sparse-file.allocate." + ByteSize.label(block);
  }

  /** The cipher alone: {@code engine} ("openssl" or "jdk") sealing blocks in records. */
  static String cipher(String engine, int block) {
    return "aes-gcm-" + engine + ".seal." + ByteSize.label(block);
  }

  /** mac mode's READ body tag alone: a GMAC of each block by {@code engine}. */
  static String gmac(String engine, int block) {
    return "aes-gcm-" + engine + ".gmac." + ByteSize.label(block);
  }

  /** HMAC-SHA256 of each block (the JDK's), what a keyed hash of READ bodies would cost instead of a GMAC. */
  static String hmac(int block) {
    return "hmac-sha256.jdk." + ByteSize.label(block);
  }

  static String memcpy(int block) {
    return "memcpy." + ByteSize.label(block);
  }
}
