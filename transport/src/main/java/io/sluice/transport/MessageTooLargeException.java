package io.sluice.transport;

/** A request or response message exceeds the configured size bound. */
public class MessageTooLargeException extends TransportException {
  private static final long serialVersionUID = 1L;

  public MessageTooLargeException(String message) {
    super(message);
  }

  public MessageTooLargeException(String message, Throwable cause) {
    super(message, cause);
  }
}
