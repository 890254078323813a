package io.sluice.transport;

/** A READ named bytes outside the registered region. */
public class ReadOutOfBoundsException extends TransportException {
  private static final long serialVersionUID = 1L;

  public ReadOutOfBoundsException(String message) {
    super(message);
  }

  public ReadOutOfBoundsException(String message, Throwable cause) {
    super(message, cause);
  }
}
