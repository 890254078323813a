package io.sluice.transport;

/**
 * A message handler refused a request for load: a bound on the requesting peer's use, or on all
 * peers' use together, is reached, and the same request may succeed later. A handler fails its
 * future with this to say so; the peer's request future then fails with this class too (ERROR
 * code EXHAUSTED), whatever the message says, so a requester decides to ask again by the class
 * alone. The message is for people: it names the bound.
 */
public class ResourceExhaustedException extends TransportException {
  private static final long serialVersionUID = 1L;

  public ResourceExhaustedException(String message) {
    super(message);
  }

  public ResourceExhaustedException(String message, Throwable cause) {
    super(message, cause);
  }
}
