package io.sluice.spark.shuffle.registry;

import java.io.File;
import java.nio.file.Path;

/** Shuffle files named as Spark's sort shuffle names them, in one folder: the registry tests' layout. */
final class TestShuffleFiles {
  private TestShuffleFiles() {}

  static ShuffleFiles in(Path dir) {
    return new ShuffleFiles() {
      @Override
      public File dataFile(int shuffleId, long mapId) {
        return dir.resolve("shuffle_" + shuffleId + "_" + mapId + "_0.data").toFile();
      }

      @Override
      public File indexFile(int shuffleId, long mapId) {
        return dir.resolve("shuffle_" + shuffleId + "_" + mapId + "_0.index").toFile();
      }
    };
  }
}
