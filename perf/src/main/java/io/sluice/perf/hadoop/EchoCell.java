package io.sluice.perf.hadoop;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.hadoop.ipc.TestRpcBase.TestRpcService;
import org.apache.hadoop.ipc.protobuf.TestProtos.EchoRequestProto;
import org.apache.hadoop.thirdparty.protobuf.ServiceException;

/**
 * One measurement cell: {@code threads} client threads, each with its own proxy (as Hadoop's
 * RPCCallBenchmark does), calling {@code echo} with the same message back to back for a warm-up
 * and then for the measured time. Every answer's length is checked. Not reusable; run once.
 */
final class EchoCell {
  /** What a run measured: calls per second over the measured time and every call's latency. */
  record Result(double callsPerSecond, long[] latencyNanos) {
    double percentileMicros(double p) {
      long[] sorted = latencyNanos.clone();
      Arrays.sort(sorted);
      if (sorted.length == 0) {
        throw new IllegalStateException("no calls completed");
      }
      int index = (int) Math.min(sorted.length - 1, Math.ceil(p / 100.0 * sorted.length) - 1);
      return sorted[Math.max(0, index)] / 1_000.0;
    }
  }

  private EchoCell() {}

  static Result run(List<TestRpcService> proxies, String message, long warmupMillis, long measureMillis)
      throws IOException, InterruptedException, TimeoutException {
    EchoRequestProto request = EchoRequestProto.newBuilder().setMessage(message).build();
    for (TestRpcService proxy : proxies) {
      try {
        proxy.echo(null, request); // connects (and, for Sluice, finds the transport) before any timing
      } catch (ServiceException e) {
        throw new IOException("the first echo call failed", e);
      }
    }
    ExecutorService pool = Executors.newFixedThreadPool(proxies.size());
    try {
      long start = System.nanoTime();
      long measureFrom = start + TimeUnit.MILLISECONDS.toNanos(warmupMillis);
      long end = measureFrom + TimeUnit.MILLISECONDS.toNanos(measureMillis);
      List<Future<long[]>> futures = new ArrayList<>();
      for (TestRpcService proxy : proxies) {
        futures.add(pool.submit(() -> callUntil(proxy, request, message.length(), measureFrom, end)));
      }
      List<long[]> parts = new ArrayList<>();
      long deadlineMillis = warmupMillis + measureMillis + 120_000;
      for (Future<long[]> f : futures) {
        try {
          parts.add(f.get(deadlineMillis, TimeUnit.MILLISECONDS));
        } catch (ExecutionException e) {
          throw new IOException("an echo client failed", e.getCause());
        }
      }
      int total = parts.stream().mapToInt(a -> a.length).sum();
      long[] all = new long[total];
      int at = 0;
      for (long[] part : parts) {
        System.arraycopy(part, 0, all, at, part.length);
        at += part.length;
      }
      return new Result(total / (measureMillis / 1000.0), all);
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * Latencies of the calls that started within the measured window and ended before its end; a
   * thread that saw none in the window goes on until one call is measured.
   */
  private static long[] callUntil(TestRpcService proxy, EchoRequestProto request, int length, long from, long end)
      throws ServiceException {
    long[] samples = new long[1 << 12];
    int count = 0;
    while (true) {
      long t0 = System.nanoTime();
      if (t0 >= end && count > 0) {
        break;
      }
      String back = proxy.echo(null, request).getMessage();
      long t1 = System.nanoTime();
      if (back.length() != length) {
        throw new IllegalStateException("echo returned " + back.length() + " characters, sent " + length);
      }
      if (t0 >= from && (t1 <= end || count == 0)) {
        if (count == samples.length) {
          samples = Arrays.copyOf(samples, count * 2);
        }
        samples[count++] = t1 - t0;
      }
    }
    return Arrays.copyOf(samples, count);
  }
}
