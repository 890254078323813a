package io.sluice.transport;

import java.io.IOException;

/**
 * Base of every failure the transport reports. Futures complete exceptionally with a subtype
 * that names the cause, so callers can react to each (for example, Spark turns any of them into
 * a fetch failure).
 */
public class TransportException extends IOException {
  private static final long serialVersionUID = 1L;

  public TransportException(String message) {
    super(message);
  }

  public TransportException(String message, Throwable cause) {
    super(message, cause);
  }
}
