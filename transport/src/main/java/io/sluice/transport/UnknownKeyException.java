package io.sluice.transport;

/** A READ named a key that no live registration of the peer carries. */
public class UnknownKeyException extends TransportException {
  private static final long serialVersionUID = 1L;

  public UnknownKeyException(String message) {
    super(message);
  }

  public UnknownKeyException(String message, Throwable cause) {
    super(message, cause);
  }
}
