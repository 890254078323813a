package org.apache.spark.shuffle.rdma;

import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.spark.FetchFailed;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;

/** The messages of the tasks that ended in a fetch failure, as the driver saw them. Thread safe. */
final class FetchFailureMessages extends SparkListener {
  private final ConcurrentLinkedQueue<String> messages = new ConcurrentLinkedQueue<>();

  private FetchFailureMessages() {}

  /** A listener added to {@code sc}'s listener bus. */
  static FetchFailureMessages of(JavaSparkContext sc) {
    FetchFailureMessages f = new FetchFailureMessages();
    sc.sc().addSparkListener(f);
    return f;
  }

  @Override
  public void onTaskEnd(SparkListenerTaskEnd end) {
    if (end.reason() instanceof FetchFailed f) {
      messages.add(f.message());
    }
  }

  /** The messages so far; wait for the listener bus to drain first. */
  List<String> messages() {
    return List.copyOf(messages);
  }
}
