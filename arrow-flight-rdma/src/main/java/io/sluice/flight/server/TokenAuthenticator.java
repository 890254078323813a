package io.sluice.flight.server;

import io.sluice.flight.CallToken;
import io.sluice.flight.FlightOption;
import java.time.Clock;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.auth2.Auth2Constants;
import org.apache.arrow.flight.auth2.AuthUtilities;
import org.apache.arrow.flight.auth2.CallHeaderAuthenticator;

/**
 * Flight call authentication by the bearer tokens of the transport secret ({@link CallToken}): a
 * call whose {@code Authorization} header is {@code Bearer <token>} passes when the token's MAC
 * checks under the secret's key, it names one of this server's audiences and it has not expired;
 * any other call goes to the application's own authenticator when there is one, and is refused
 * with UNAUTHENTICATED, saying which check failed, when there is none. Thread safe.
 */
final class TokenAuthenticator implements CallHeaderAuthenticator {
  /** The peer identity of calls a token authenticated. */

  private final CallToken.Key key;
  private final Supplier<Set<String>> audiences;
  private final Clock clock;
  private final java.time.Duration maxValidity;
  private final CallHeaderAuthenticator fallback;

  /**
   * @param audiences this server's audiences, in {@link CallToken#audience}'s form (its own location
   *     is known once its port is bound)
   * @param fallback the application's authenticator, or null
   */
  TokenAuthenticator(CallToken.Key key, Supplier<Set<String>> audiences, Clock clock, java.time.Duration maxValidity,
      CallHeaderAuthenticator fallback) {
    this.key = key;
    this.audiences = audiences;
    this.clock = clock;
    this.maxValidity = maxValidity;
    this.fallback = fallback;
  }

  @Override
  public AuthResult authenticate(CallHeaders headers) {
    String presented = AuthUtilities.getValueFromAuthHeader(headers, Auth2Constants.BEARER_PREFIX);
    String refusal;
    if (presented == null) {
      refusal = "this server authenticates every call: send 'Authorization: Bearer <token>' (CallToken.mint of"
          + " the server's secret, for this server's location)";
    } else {
      try {
        CallToken.Claims claims = key.verify(presented, audiences.get(), clock);
        if (!claims.expires().isAfter(clock.instant().plus(maxValidity))) {
          // The call's peer identity is the audience its token names: the server signs its
          // data-plane answers for it (TableProducer), so a signed answer names the server.
          String audience = claims.audience();
          return () -> audience;
        }
        refusal = "the bearer token expires at " + claims.expires() + ", further ahead than this server accepts ("
            + FlightOption.TOKEN_MAX_VALIDITY_MS.key() + "=" + maxValidity.toMillis() + "); mint one that lives less long";
      } catch (CallToken.InvalidTokenException e) {
        refusal = e.getMessage();
      }
    }
    if (fallback != null) {
      return fallback.authenticate(headers);
    }
    throw CallStatus.UNAUTHENTICATED.withDescription(refusal).toRuntimeException();
  }
}
