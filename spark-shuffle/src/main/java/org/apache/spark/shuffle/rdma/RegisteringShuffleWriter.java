package org.apache.spark.shuffle.rdma;

import java.io.IOException;
import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.shuffle.ShuffleWriter;
import scala.Option;
import scala.Product2;

/**
 * Writes map output with Spark's own sort-shuffle writer (standard .data/.index files, Spark's
 * serializer and codec, a standard MapStatus), then, before the MapStatus leaves the task, has
 * the committed data file registered for remote READs ({@code registerCommitted}: the manager's
 * rule, which on an executor's first map tasks may leave it to the transport's open). Without a
 * transport (it could not open, or this shuffle uses Spark's) the output is Spark's alone. One
 * instance per map task; not thread safe.
 */
final class RegisteringShuffleWriter<K, V> extends ShuffleWriter<K, V> {
  private final ShuffleWriter<K, V> delegate;
  private final Runnable registerCommitted;

  RegisteringShuffleWriter(ShuffleWriter<K, V> delegate, Runnable registerCommitted) {
    this.delegate = delegate;
    this.registerCommitted = registerCommitted;
  }

  @Override
  public void write(scala.collection.Iterator<Product2<K, V>> records) throws IOException {
    delegate.write(records);
  }

  @Override
  public Option<MapStatus> stop(boolean success) {
    Option<MapStatus> status = delegate.stop(success);
    if (success && status.isDefined()) {
      registerCommitted.run();
    }
    return status;
  }

  @Override
  public long[] getPartitionLengths() {
    return delegate.getPartitionLengths();
  }
}
