package io.sluice.transport;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * The checksum every integrity check of READ data uses: CRC32C (Castagnoli), which the JDK
 * computes with the processor's CRC instructions at memory speed. An owner computes it once over
 * bytes that do not change while registered (a map output's partition, a published batch body) and
 * hands it to readers with the range's address; a reader computes it over what it READ and compares
 * before handing the bytes on ({@link #verify}).
 */
public final class Checksums {
  private Checksums() {}

  /** CRC32C of the buffer's remaining bytes; the buffer's position and limit do not change. */
  public static int crc32c(ByteBuffer bytes) {
    CRC32C crc = new CRC32C();
    crc.update(bytes.duplicate());
    return (int) crc.getValue();
  }

  /** CRC32C of {@code length} bytes of {@code bytes} from absolute index {@code from}. */
  public static int crc32c(ByteBuffer bytes, int from, int length) {
    return crc32c(bytes.duplicate().limit(from + length).position(from));
  }

  /**
   * Checks that {@code read} (its remaining bytes) has the CRC32C {@code expected}.
   *
   * @throws ReadIntegrityException naming the peer, the region and the range when it does not
   */
  public static void verify(ByteBuffer read, int expected, NodeAddress peer, RemoteDescriptor region,
      long offset, String what) throws ReadIntegrityException {
    int actual = crc32c(read);
    if (actual != expected) {
      throw new ReadIntegrityException(peer, region, offset, read.remaining(), expected, actual, what);
    }
  }
}
