package io.sluice.transport;

/** The connection closed, or the peer vanished, before the operation completed. */
public class PeerClosedException extends TransportException {
  private static final long serialVersionUID = 1L;

  public PeerClosedException(String message) {
    super(message);
  }

  public PeerClosedException(String message, Throwable cause) {
    super(message, cause);
  }
}
