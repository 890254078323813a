package io.sluice.perf.hadoop;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs Hadoop's own {@code org.apache.hadoop.ipc.RPCCallBenchmark} (hadoop-common tests jar) for
 * the stock protobuf engine in a child JVM with this JVM's class path, and reads its "Total calls
 * per second" line. Stateless.
 */
final class RpcCallBenchmarkRun {
  private static final String TOTAL = "Total calls per second:";

  private RpcCallBenchmarkRun() {}

  static double callsPerSecond(int clientThreads, int serverThreads, int messageBytes, int seconds)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(
        ProcessHandle.current().info().command().orElse("java"), "-Xmx1g",
        "-cp", System.getProperty("java.class.path"), "org.apache.hadoop.ipc.RPCCallBenchmark",
        "-c", String.valueOf(clientThreads), "-s", String.valueOf(serverThreads),
        "-m", String.valueOf(messageBytes), "-t", String.valueOf(seconds), "-e", "protobuf"));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    Double result = null;
    StringBuilder output = new StringBuilder();
    try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        output.append(line).append('\n');
        int at = line.indexOf(TOTAL);
        if (at >= 0) {
          result = Double.parseDouble(line.substring(at + TOTAL.length()).trim());
        }
      }
    }
    if (!process.waitFor(seconds + 120L, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new IOException("RPCCallBenchmark did not finish within " + (seconds + 120) + " s");
    }
    if (result == null) {
      throw new IOException("RPCCallBenchmark printed no '" + TOTAL + "' line; its output:\n" + output);
    }
    return result;
  }
}
