package io.sluice.transport;

/** The peer's message handler failed the request; the message says how. */
public class RemoteHandlerException extends TransportException {
  private static final long serialVersionUID = 1L;

  public RemoteHandlerException(String message) {
    super(message);
  }

  public RemoteHandlerException(String message, Throwable cause) {
    super(message, cause);
  }
}
