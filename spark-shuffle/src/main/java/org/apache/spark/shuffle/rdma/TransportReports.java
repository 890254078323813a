package org.apache.spark.shuffle.rdma;

import io.sluice.spark.shuffle.TransportReport;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.IntStream;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * Collects every executor's {@link TransportReport} from the driver, with one job of many small
 * tasks so that each live executor runs at least one. Call it while the executors are idle: an
 * executor that runs none of the tasks is missed. Reports travel as Java-serialized bytes, so the
 * application's serializer (Kryo cannot write records) does not matter. Stateless.
 */
public final class TransportReports {
  private static final int TASKS = 64;

  private TransportReports() {}

  /** One report per executor that runs RdmaShuffleManager with a transport, in executor id order. */
  public static List<TransportReport> collect(JavaSparkContext sc) {
    // The executors' transports may start in this job; they ask the driver's address book, which on
    // Spark 3.5 is otherwise set up with the first shuffle.
    if (sc.env().shuffleManager() instanceof RdmaShuffleManager m) {
      m.setUpDriver();
    }
    Map<String, TransportReport> byExecutor = new TreeMap<>();
    for (byte[] bytes : sc.parallelize(IntStream.range(0, TASKS).boxed().toList(), TASKS)
        .flatMap(i -> RdmaShuffleManager.localTransportReport().map(TransportReports::toBytes).stream().iterator())
        .collect()) {
      TransportReport r = fromBytes(bytes);
      byExecutor.merge(r.executorId(), r, (a, b) -> a.bytesRead() >= b.bytesRead() ? a : b);
    }
    return new ArrayList<>(byExecutor.values());
  }

  private static byte[] toBytes(TransportReport report) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    try (java.io.ObjectOutputStream o = new java.io.ObjectOutputStream(out)) {
      o.writeObject(report);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  private static TransportReport fromBytes(byte[] bytes) {
    try (java.io.ObjectInputStream in = new java.io.ObjectInputStream(new java.io.ByteArrayInputStream(bytes))) {
      return (TransportReport) in.readObject();
    } catch (java.io.IOException | ClassNotFoundException e) {
      throw new IllegalStateException("an executor's transport report could not be read back", e);
    }
  }
}
