package io.sluice.transport;

/** A provider cannot run here (no native library, no device, no shared memory); the message says why. */
public class TransportUnavailableException extends TransportException {
  private static final long serialVersionUID = 1L;

  public TransportUnavailableException(String message) {
    super(message);
  }

  public TransportUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
