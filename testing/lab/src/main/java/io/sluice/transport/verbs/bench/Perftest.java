package io.sluice.transport.verbs.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs perftest's {@code ib_read_bw} and {@code ib_read_lat} (Debian package {@code perftest})
 * on one RDMA device of this machine, server and client as two processes connected through
 * rdma_cm ({@code -R}) at the device's address, and reads the client's result line. The
 * yardstick of {@link VerbsReadBench}. Every run has a deadline; a run that fails or prints no
 * result throws {@link IllegalStateException} with the client's last lines. Not thread safe.
 */
final class Perftest {
  /** perftest reports MB/sec of 2^20 bytes; the project's figures use 10^6. */
  private static final double MIB_IN_MB = 1.048576;
  private static final long RUN_SECONDS = 180;
  private static final long CONNECT_SECONDS = 60;
  /**
   * perftest times itself with the CPU's cycle counter and the clock rate in /proc/cpuinfo;
   * under emulation a run now and then reports 0 or "inf". Such a run is repeated, this often.
   */
  private static final int ATTEMPTS = 3;

  private final String device;
  private final String address;
  private int nextPort = 18515;

  Perftest(String device, String address) {
    this.device = device;
    this.address = address;
  }

  /** MB/s (10^6 bytes) of {@code ib_read_bw}: {@code size}-byte READs, {@code inFlight} posted, {@code bytes} in all. */
  double readBandwidth(int size, int inFlight, long bytes) {
    // columns: bytes, iterations, peak MB/sec, average MB/sec, message rate
    return measure("ib_read_bw", size, List.of("-t", String.valueOf(inFlight), "-n",
        String.valueOf(Math.max(5, bytes / size))), 3) * MIB_IN_MB;
  }

  /** Microseconds of one READ as {@code ib_read_lat} reports them: typical (median) and 99th percentile. */
  record Latency(double p50, double p99) {}

  /** {@code ib_read_lat}'s figures for one {@code size}-byte READ at a time, over {@code count} READs. */
  Latency readLatency(int size, int count) {
    // columns: bytes, iterations, t_min, t_max, t_typical, t_avg, t_stdev, 99% percentile, 99.9% percentile
    List<String> rejected = new ArrayList<>();
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      String[] row = run("ib_read_lat", size, List.of("-n", String.valueOf(count)));
      if (row.length > 7) {
        double p50 = sane(row[4]);
        double p99 = sane(row[7]);
        if (p50 > 0 && p99 > 0) {
          return new Latency(p50, p99);
        }
      }
      rejected.add(String.join(" ", row));
    }
    throw new IllegalStateException("ib_read_lat -s " + size + " reported no usable figures in " + ATTEMPTS + " runs: "
        + rejected);
  }

  /** The figure, or 0 when it is not a positive finite number ("inf", "-nan" under emulation). */
  private static double sane(String figure) {
    try {
      double value = Double.parseDouble(figure);
      return value > 0 && Double.isFinite(value) ? value : 0;
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /** Column {@code column} of the result line, from the first of {@link #ATTEMPTS} runs that reports a sane figure. */
  private double measure(String tool, int size, List<String> options, int column) {
    List<String> rejected = new ArrayList<>();
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      String figure = run(tool, size, options)[column];
      try {
        double value = Double.parseDouble(figure);
        if (value > 0 && Double.isFinite(value)) {
          return value;
        }
      } catch (NumberFormatException e) {
        // "inf", "-nan": rejected below
      }
      rejected.add(figure);
    }
    throw new IllegalStateException(tool + " -s " + size + " reported no usable figure in " + ATTEMPTS + " runs: "
        + rejected);
  }

  private String[] run(String tool, int size, List<String> options) {
    List<String> command = new ArrayList<>(List.of(tool, "-d", device, "-R", "-F", "-p", String.valueOf(nextPort++),
        "-s", String.valueOf(size)));
    command.addAll(options);
    Path serverLog = null;
    Path clientLog = null;
    Process server = null;
    try {
      serverLog = Files.createTempFile("perftest-server", ".log");
      clientLog = Files.createTempFile("perftest-client", ".log");
      server = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(serverLog.toFile()).start();
      List<String> clientCommand = new ArrayList<>(command);
      clientCommand.add(address);
      long connectDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(CONNECT_SECONDS);
      // The client fails at once while the server is not listening yet: try again until it connects.
      while (true) {
        TimeUnit.MILLISECONDS.sleep(500);
        Process client = new ProcessBuilder(clientCommand).redirectErrorStream(true)
            .redirectOutput(clientLog.toFile()).start();
        if (!client.waitFor(RUN_SECONDS, TimeUnit.SECONDS)) {
          client.destroyForcibly();
          throw new IllegalStateException(tool + " did not finish within " + RUN_SECONDS + " s" + tail(clientLog));
        }
        if (client.exitValue() == 0) {
          break;
        }
        if (!server.isAlive() || System.nanoTime() > connectDeadline) {
          throw new IllegalStateException(tool + " failed (exit " + client.exitValue() + ")" + tail(clientLog)
              + tail(serverLog));
        }
      }
      if (!server.waitFor(30, TimeUnit.SECONDS)) {
        server.destroyForcibly();
      }
      for (String line : Files.readAllLines(clientLog)) {
        String[] f = line.trim().split("\\s+");
        if (f.length >= 5 && f[0].equals(String.valueOf(size))) {
          return f;
        }
      }
      throw new IllegalStateException(tool + " printed no result line" + tail(clientLog));
    } catch (IOException e) {
      throw new IllegalStateException("cannot run " + tool + " (is perftest installed?)", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running " + tool, e);
    } finally {
      if (server != null && server.isAlive()) {
        server.destroyForcibly();
      }
      delete(serverLog);
      delete(clientLog);
    }
  }

  private static String tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log);
      return "; " + log.getFileName() + ": " + String.join(" | ", lines.subList(Math.max(0, lines.size() - 6), lines.size()));
    } catch (IOException e) {
      return "";
    }
  }

  private static void delete(Path file) {
    if (file != null) {
      try {
        Files.deleteIfExists(file);
      } catch (IOException e) {
        // a leftover temporary file is harmless
      }
    }
  }
}
