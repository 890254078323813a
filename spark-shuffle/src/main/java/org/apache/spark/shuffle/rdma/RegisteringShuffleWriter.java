package org.apache.spark.shuffle.rdma;

import java.io.IOException;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.shuffle.ShuffleWriter;
import scala.Option;
import scala.Product2;

/**
 * Writes map output with Spark's own sort-shuffle writer (standard .data/.index files, Spark's
 * serializer and codec, a standard MapStatus), then registers the committed data file for
 * remote READs. The transport is asked for only then: on an executor's first map tasks it is still
 * opening while they compute. Before the MapStatus leaves the task it waits until the driver has
 * this executor's transport registration ({@link ExecutorShuffleTransport#awaitRegistered}), at
 * once except on the executor's first map task. Without a transport (it could not open, or this
 * shuffle uses Spark's) the output is Spark's alone. One instance per map task; not thread safe.
 */
final class RegisteringShuffleWriter<K, V> extends ShuffleWriter<K, V> {
  private final ShuffleWriter<K, V> delegate;
  private final Supplier<Optional<ExecutorShuffleTransport>> transport;
  private final int shuffleId;
  private final long mapId;

  RegisteringShuffleWriter(ShuffleWriter<K, V> delegate, Supplier<Optional<ExecutorShuffleTransport>> transport,
      int shuffleId, long mapId) {
    this.delegate = delegate;
    this.transport = transport;
    this.shuffleId = shuffleId;
    this.mapId = mapId;
  }

  @Override
  public void write(scala.collection.Iterator<Product2<K, V>> records) throws IOException {
    delegate.write(records);
  }

  @Override
  public Option<MapStatus> stop(boolean success) {
    Option<MapStatus> status = delegate.stop(success);
    if (success && status.isDefined()) {
      transport.get().ifPresent(t -> {
        t.registry().registerQuietly(shuffleId, mapId);
        t.awaitRegistered();
      });
    }
    return status;
  }

  @Override
  public long[] getPartitionLengths() {
    return delegate.getPartitionLengths();
  }
}
