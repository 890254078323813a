package io.sluice.transport;

/** Mutual authentication with the peer failed: wrong secret, or a peer that does not speak the protocol. */
public class AuthenticationFailedException extends TransportException {
  private static final long serialVersionUID = 1L;

  public AuthenticationFailedException(String message) {
    super(message);
  }

  public AuthenticationFailedException(String message, Throwable cause) {
    super(message, cause);
  }
}
