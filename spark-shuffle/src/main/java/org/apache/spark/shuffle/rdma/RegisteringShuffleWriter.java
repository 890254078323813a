package org.apache.spark.shuffle.rdma;

import io.sluice.spark.shuffle.registry.MapOutputRegistry;
import java.io.IOException;
import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.shuffle.ShuffleWriter;
import scala.Option;
import scala.Product2;

/**
 * Writes map output with Spark's own sort-shuffle writer (standard .data/.index files, Spark's
 * serializer and codec, a standard MapStatus), then registers the committed data file for
 * remote READs. Before the MapStatus leaves the task it waits until the driver has this executor's
 * transport registration ({@link ExecutorShuffleTransport#awaitRegistered}), at once except on the
 * executor's first map task. One instance per map task; not thread safe.
 */
final class RegisteringShuffleWriter<K, V> extends ShuffleWriter<K, V> {
  private final ShuffleWriter<K, V> delegate;
  private final MapOutputRegistry registry;
  private final int shuffleId;
  private final long mapId;
  private final Runnable awaitRegistered;

  RegisteringShuffleWriter(ShuffleWriter<K, V> delegate, MapOutputRegistry registry, int shuffleId, long mapId,
      Runnable awaitRegistered) {
    this.delegate = delegate;
    this.awaitRegistered = awaitRegistered;
    this.registry = registry;
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
      registry.registerQuietly(shuffleId, mapId);
      awaitRegistered.run();
    }
    return status;
  }

  @Override
  public long[] getPartitionLengths() {
    return delegate.getPartitionLengths();
  }
}
