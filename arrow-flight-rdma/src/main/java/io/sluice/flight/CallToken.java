package io.sluice.flight;

import io.sluice.transport.SecretKeys;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.config.TransportKeys;
import java.util.Base64;
import java.util.Optional;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.CallInfo;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightClientMiddleware;
import org.apache.arrow.flight.auth2.Auth2Constants;
import org.apache.arrow.flight.auth2.BearerCredentialWriter;
import org.apache.arrow.flight.grpc.CredentialCallOption;

/**
 * The bearer token that authenticates Flight calls to a {@link SluiceFlightServer} configured with a
 * transport secret. Every Flight client presents it the standard way, as the header {@code
 * Authorization: Bearer <token>}:
 *
 * <pre>{@code
 * String token = CallToken.derive(secret);                        // or CallToken.of(config)
 * flightClient.getStream(ticket, CallToken.callOption(token));   // flight-core, per call
 * FlightClient.builder(allocator, location).intercept(CallToken.clientMiddleware(token)).build();  // every call
 * }</pre>
 *
 * pyarrow: {@code flight.FlightCallOptions(headers=[(b"authorization", b"Bearer " + token)])}.
 *
 * <p>The token is one-way: token = base64url(HKDF-Expand(psk, "sluice/flight bearer", 32)), without
 * padding, where psk is the transport's pre-shared key of the secret ({@link SecretKeys}). It does
 * not reveal the secret, and cannot stand in for it on the transport; whoever holds it can make
 * Flight calls, so on networks others can watch, use TLS locations ({@code grpc+tls}). Stateless
 * and thread safe.
 */
public final class CallToken {
  private static final String LABEL = "sluice/flight bearer";

  private CallToken() {}

  /**
   * The token of {@code secret}.
   *
   * @throws IllegalArgumentException naming {@code sluice.transport.secret} if the secret is empty or
   *     shorter than {@link SecretKeys#MIN_SECRET_BYTES} bytes
   */
  public static String derive(String secret) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(SecretKeys.derive(secret, LABEL, 32));
  }

  /** The token of the secret {@code config} holds; empty when it holds no secret. */
  public static Optional<String> of(TransportConfig config) {
    String secret = config.value(TransportKeys.SECRET);
    return secret.isEmpty() ? Optional.empty() : Optional.of(derive(secret));
  }

  /** A call option presenting {@code token}, for one call of a plain {@code FlightClient}. */
  public static CallOption callOption(String token) {
    return new CredentialCallOption(new BearerCredentialWriter(token));
  }

  /** Client middleware presenting {@code token} on every call ({@code FlightClient.Builder.intercept}). */
  public static FlightClientMiddleware.Factory clientMiddleware(String token) {
    String value = Auth2Constants.BEARER_PREFIX + token;
    return (CallInfo info) -> new FlightClientMiddleware() {
      @Override
      public void onBeforeSendingHeaders(CallHeaders outgoing) {
        outgoing.insert(Auth2Constants.AUTHORIZATION_HEADER, value);
      }

      @Override
      public void onHeadersReceived(CallHeaders incoming) {}

      @Override
      public void onCallCompleted(CallStatus status) {}
    };
  }
}
