package io.sluice.transport.wire;

import io.sluice.transport.AuthenticationFailedException;
import io.sluice.transport.MessageTooLargeException;
import io.sluice.transport.ProtocolException;
import io.sluice.transport.ReadOutOfBoundsException;
import io.sluice.transport.RegionRevokedException;
import io.sluice.transport.RemoteHandlerException;
import io.sluice.transport.ResourceExhaustedException;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportUnavailableException;
import io.sluice.transport.UnknownKeyException;

/**
 * Error codes carried by ERROR frames, each mapped to the exception the requester sees. On the
 * wire a code is its position from 1 ({@link WireIds}): UNKNOWN_KEY is 1, EXHAUSTED 9; new codes
 * are appended. A requester acts on the code alone; the text is for people.
 */
public enum ErrorCode {
  UNKNOWN_KEY,
  REGION_REVOKED,
  OUT_OF_BOUNDS,
  HANDLER_FAILED,
  MESSAGE_TOO_LARGE,
  AUTHENTICATION_FAILED,
  PROTOCOL,
  UNAVAILABLE,
  /** The message handler refused for load; the same request may succeed later. */
  EXHAUSTED;

  private static final ErrorCode[] VALUES = values();

  public byte id() {
    return WireIds.of(this);
  }

  public static ErrorCode fromId(byte id) throws ProtocolException {
    return WireIds.decode(VALUES, id, "error code");
  }

  /** The exception a requester sees for this code and the peer's text. */
  public TransportException toException(String message) {
    String text = "peer: " + message;
    return switch (this) {
      case UNKNOWN_KEY -> new UnknownKeyException(text);
      case REGION_REVOKED -> new RegionRevokedException(text);
      case OUT_OF_BOUNDS -> new ReadOutOfBoundsException(text);
      case HANDLER_FAILED -> new RemoteHandlerException(text);
      case MESSAGE_TOO_LARGE -> new MessageTooLargeException(text);
      case AUTHENTICATION_FAILED -> new AuthenticationFailedException(text);
      case PROTOCOL -> new ProtocolException(text);
      case UNAVAILABLE -> new TransportUnavailableException(text);
      case EXHAUSTED -> new ResourceExhaustedException(text);
    };
  }

  /** The code that reports a local failure to a peer. */
  public static ErrorCode of(TransportException e) {
    if (e instanceof UnknownKeyException) {
      return UNKNOWN_KEY;
    } else if (e instanceof RegionRevokedException) {
      return REGION_REVOKED;
    } else if (e instanceof ReadOutOfBoundsException) {
      return OUT_OF_BOUNDS;
    } else if (e instanceof MessageTooLargeException) {
      return MESSAGE_TOO_LARGE;
    } else if (e instanceof AuthenticationFailedException) {
      return AUTHENTICATION_FAILED;
    } else if (e instanceof TransportUnavailableException) {
      return UNAVAILABLE;
    } else if (e instanceof ProtocolException) {
      return PROTOCOL;
    } else if (e instanceof ResourceExhaustedException) {
      return EXHAUSTED;
    }
    return HANDLER_FAILED;
  }
}
