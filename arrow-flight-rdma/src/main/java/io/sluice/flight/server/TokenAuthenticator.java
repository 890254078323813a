package io.sluice.flight.server;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.auth2.Auth2Constants;
import org.apache.arrow.flight.auth2.AuthUtilities;
import org.apache.arrow.flight.auth2.CallHeaderAuthenticator;

/**
 * Flight call authentication by the bearer token derived from the transport secret ({@link
 * io.sluice.flight.CallToken}): a call whose {@code Authorization} header is {@code Bearer <token>}
 * passes; any other call goes to the application's own authenticator when there is one, and is
 * refused with UNAUTHENTICATED when there is none. Immutable and thread safe.
 */
final class TokenAuthenticator implements CallHeaderAuthenticator {
  /** The peer identity of calls the token authenticated. */
  static final String PEER = "sluice-secret";

  private final byte[] token;
  private final CallHeaderAuthenticator fallback;

  /** @param fallback the application's authenticator, or null */
  TokenAuthenticator(String token, CallHeaderAuthenticator fallback) {
    this.token = token.getBytes(StandardCharsets.US_ASCII);
    this.fallback = fallback;
  }

  @Override
  public AuthResult authenticate(CallHeaders headers) {
    String presented = AuthUtilities.getValueFromAuthHeader(headers, Auth2Constants.BEARER_PREFIX);
    if (presented != null && MessageDigest.isEqual(token, presented.getBytes(StandardCharsets.US_ASCII))) {
      return () -> PEER;
    }
    if (fallback != null) {
      return fallback.authenticate(headers);
    }
    throw CallStatus.UNAUTHENTICATED.withDescription(presented == null
        ? "this server authenticates every call: send 'Authorization: Bearer <token>' (CallToken.derive of the"
            + " server's secret)"
        : "the bearer token is not this server's").toRuntimeException();
  }
}
