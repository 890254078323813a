package org.apache.spark.shuffle.rdma;

import org.apache.spark.TaskContext;
import org.apache.spark.serializer.Serializer;
import org.apache.spark.util.collection.ExternalSorter;
import scala.Option;
import scala.math.Ordering;

/**
 * Builds the reader's sorter on Spark 4.1 and 4.2. There the constructor takes a sixth, the row-based
 * checksums; like Spark's own reader this passes its default (none).
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
    return new ExternalSorter<>(context, Option.empty(), Option.empty(), ordering, serializer,
        ExternalSorter.$lessinit$greater$default$6());
  }
}
