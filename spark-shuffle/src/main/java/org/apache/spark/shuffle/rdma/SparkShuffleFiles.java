package org.apache.spark.shuffle.rdma;

import io.sluice.spark.shuffle.registry.ShuffleFiles;
import java.io.File;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import scala.Option;

/**
 * The files of this executor's map outputs as Spark's {@link IndexShuffleBlockResolver} names
 * them. Stateless; thread safe as the resolver is.
 */
record SparkShuffleFiles(IndexShuffleBlockResolver resolver) implements ShuffleFiles {
  @Override
  public File dataFile(int shuffleId, long mapId) {
    return resolver.getDataFile(shuffleId, mapId);
  }

  @Override
  public File indexFile(int shuffleId, long mapId) {
    return resolver.getIndexFile(shuffleId, mapId, Option.empty());
  }
}
