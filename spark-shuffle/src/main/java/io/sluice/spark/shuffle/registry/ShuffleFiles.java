package io.sluice.spark.shuffle.registry;

import java.io.File;

/**
 * Where this executor's committed map outputs are: the data and index files of one map task, as
 * the sort-shuffle writers name them. The files need not exist; a map task without records
 * commits no data file. Implementations are thread safe.
 */
public interface ShuffleFiles {
  /** The data file of a map output. */
  File dataFile(int shuffleId, long mapId);

  /** The index file of a map output: one big-endian long offset per partition boundary. */
  File indexFile(int shuffleId, long mapId);
}
