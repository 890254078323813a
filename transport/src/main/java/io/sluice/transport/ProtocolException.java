package io.sluice.transport;

/** The peer sent a frame that is malformed or not allowed in the connection's state; the connection is closed. */
public class ProtocolException extends TransportException {
  private static final long serialVersionUID = 1L;

  public ProtocolException(String message) {
    super(message);
  }

  public ProtocolException(String message, Throwable cause) {
    super(message, cause);
  }
}
