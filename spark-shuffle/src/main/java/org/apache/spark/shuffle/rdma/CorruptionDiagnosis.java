package org.apache.spark.shuffle.rdma;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.zip.Checksum;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.network.shuffle.checksum.Cause;
import org.apache.spark.network.shuffle.checksum.ShuffleChecksumHelper;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.ShuffleBlockId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Spark's diagnosis of a corrupted shuffle block ({@code spark.shuffle.checksum.enabled}, on by
 * default): the reader computes the block's checksum with Spark's algorithm over the bytes it
 * got, and the block's owner compares it, and the bytes now on its disk, with the checksum its map
 * task wrote beside the data file. The cause reads as Spark's own reader words it ("Block
 * shuffle_0_1_2 is corrupted due to DISK_ISSUE"), so a user's tooling that looks for it finds it.
 * A best effort, as in Spark: a diagnosis that fails says the cause is unknown. Stateless apart
 * from the settings read once.
 */
final class CorruptionDiagnosis {
  private static final Logger LOG = LoggerFactory.getLogger(CorruptionDiagnosis.class);

  private final boolean enabled;
  private final String algorithm;

  private CorruptionDiagnosis(boolean enabled, String algorithm) {
    this.enabled = enabled;
    this.algorithm = algorithm;
  }

  /** Spark's checksum settings as {@code conf} has them. */
  static CorruptionDiagnosis of(SparkConf conf) {
    return new CorruptionDiagnosis(conf.getBoolean("spark.shuffle.checksum.enabled", true),
        conf.get("spark.shuffle.checksum.algorithm", "ADLER32"));
  }

  /** A block's bytes as the reader got them, handed to a checksum piece by piece. */
  interface BlockBytes {
    void feed(Checksum checksum) throws IOException;
  }

  /**
   * Spark's diagnosis of {@code block}, whose bytes as this reader got them are {@code bytes},
   * asked of the executor at {@code owner} (this executor's own block manager when it is the
   * owner); empty text when Spark's checksums are off.
   */
  String diagnose(ShuffleBlockId block, ByteBuffer bytes, BlockManagerId owner) {
    return diagnose(block, c -> c.update(bytes.duplicate()), owner);
  }

  /** As {@link #diagnose(ShuffleBlockId, ByteBuffer, BlockManagerId)}, for bytes read in pieces; unknown if they cannot be read. */
  String diagnose(ShuffleBlockId block, BlockBytes bytes, BlockManagerId owner) {
    if (!enabled) {
      return "";
    }
    long started = System.nanoTime();
    Cause cause;
    try {
      Checksum c = ShuffleChecksumHelper.getChecksumByAlgorithm(algorithm);
      bytes.feed(c);
      long checksum = c.getValue();
      SparkEnv env = SparkEnv.get();
      if (owner.executorId().equals(env.executorId())) {
        cause = env.blockManager().diagnoseShuffleBlockCorruption(block, checksum, algorithm);
      } else {
        cause = env.blockManager().blockStoreClient().diagnoseCorruption(owner.host(), owner.port(),
            owner.executorId(), block.shuffleId(), block.mapId(), block.reduceId(), checksum, algorithm);
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("Could not diagnose the corruption of {} read from {}", block, owner, e);
      cause = Cause.UNKNOWN_ISSUE;
    }
    String diagnosis = words(block, cause, algorithm);
    LOG.info("Diagnosed a corrupted block in {} ms: {}", (System.nanoTime() - started) / 1_000_000, diagnosis);
    return diagnosis;
  }

  /** The diagnosis in the words of Spark's shuffle reader. */
  static String words(ShuffleBlockId block, Cause cause, String algorithm) {
    return switch (cause) {
      case UNSUPPORTED_CHECKSUM_ALGORITHM -> "Block " + block + " is corrupted but corruption diagnosis failed due to"
          + " unsupported checksum algorithm: " + algorithm;
      case CHECKSUM_VERIFY_PASS -> "Block " + block + " is corrupted but checksum verification passed";
      case UNKNOWN_ISSUE -> "Block " + block + " is corrupted but the cause is unknown";
      default -> "Block " + block + " is corrupted due to " + cause;
    };
  }
}
