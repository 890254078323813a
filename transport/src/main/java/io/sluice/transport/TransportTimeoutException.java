package io.sluice.transport;

/** An operation missed its deadline. */
public class TransportTimeoutException extends TransportException {
  private static final long serialVersionUID = 1L;

  public TransportTimeoutException(String message) {
    super(message);
  }

  public TransportTimeoutException(String message, Throwable cause) {
    super(message, cause);
  }
}
