package io.sluice.transport;

/**
 * A READ completed, but the bytes that arrived are not the bytes the region's owner published: their
 * CRC32C differs from the checksum the owner computed when the bytes were registered. The READ's
 * data must not be used. The message names the peer, the region, the range and both checksums, so
 * an operator can tell a corrupting device or fabric from a changed file.
 */
public class ReadIntegrityException extends TransportException {
  private static final long serialVersionUID = 1L;

  private final NodeAddress peer;
  private final long regionNode;
  private final long offset;
  private final long length;

  public ReadIntegrityException(NodeAddress peer, RemoteDescriptor region, long offset, long length,
      int expected, int actual, String what) {
    super(String.format(
        "corrupt READ of %s: %d bytes at offset %d of region %s (node %016x) from %s: CRC32C %08x, the owner published %08x",
        what, length, offset, region == null ? "?" : String.format("0x%x/%d", region.address(), region.length()),
        region == null ? 0L : region.node(), peer, actual, expected));
    this.peer = peer;
    this.regionNode = region == null ? 0L : region.node();
    this.offset = offset;
    this.length = length;
  }

  /** The peer the bytes were READ from. */
  public NodeAddress peer() {
    return peer;
  }

  /** The node that owns the region. */
  public long regionNode() {
    return regionNode;
  }

  /** Offset of the checked range in the region (or in the owner's file). */
  public long offset() {
    return offset;
  }

  /** Length of the checked range. */
  public long length() {
    return length;
  }
}
