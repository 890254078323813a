package io.sluice.transport;

/**
 * A same-host READ, or a read of a view, reached past the end of the file that backs the peer's
 * region: something shortened the file under the registered region (any process of the same user
 * may). Every READ of the region fails so while its file is short, even of bytes the file still
 * holds: nothing stands in for the missing ones. The message names the peer, the region's key, its file, the range and
 * the file's size.
 */
public class RegionTruncatedException extends TransportException {
  private static final long serialVersionUID = 1L;

  private final NodeAddress peer;
  private final long key;
  private final long offset;
  private final long length;
  private final long fileSize;

  /**
   * @param regionEnd where the region ends in its file
   * @param offset where the range starts in the region
   */
  public RegionTruncatedException(NodeAddress peer, long key, String file, long regionEnd, long offset, long length,
      long fileSize) {
    super(String.format("bytes [%d, %d) of region %x from %s cannot be read: its file %s was cut to %d bytes,"
        + " short of the region's end at %d", offset, offset + length, key, peer, file, fileSize, regionEnd));
    this.peer = peer;
    this.key = key;
    this.offset = offset;
    this.length = length;
    this.fileSize = fileSize;
  }

  /** The peer that owns the region. */
  public NodeAddress peer() {
    return peer;
  }

  /** The region's key. */
  public long key() {
    return key;
  }

  /** Where the range starts in the region. */
  public long offset() {
    return offset;
  }

  /** The range's length. */
  public long length() {
    return length;
  }

  /** The file's size when the read came short. */
  public long fileSize() {
    return fileSize;
  }
}
