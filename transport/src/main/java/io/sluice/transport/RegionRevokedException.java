package io.sluice.transport;

/** The remote region was closed (revoked) by its owner before or while it was read. */
public class RegionRevokedException extends TransportException {
  private static final long serialVersionUID = 1L;

  public RegionRevokedException(String message) {
    super(message);
  }

  public RegionRevokedException(String message, Throwable cause) {
    super(message, cause);
  }
}
