package org.apache.spark.shuffle.rdma;

import org.apache.spark.TaskContext;
import org.apache.spark.serializer.Serializer;
import org.apache.spark.util.collection.ExternalSorter;
import scala.Option;
import scala.math.Ordering;

/**
 * Builds the reader's sorter on Spark 3.5 and 4.0. There the constructor takes five arguments.
 *
 * <p>The only Spark API that differs between the lines this module supports: each line's build
 * compiles exactly one {@code src/shim/sorter*} variant of this class, the rest of the module is
 * the same source everywhere.
 */
final class ExternalSorters {
  private ExternalSorters() {}

  /** A sorter by {@code ordering}, without aggregation or partitioning, spilling through {@code serializer}. */
  static <K, C> ExternalSorter<K, C, C> create(TaskContext context, Option<Ordering<K>> ordering,
      Serializer serializer) {
    return new ExternalSorter<>(context, Option.empty(), Option.empty(), ordering, serializer);
  }
}
