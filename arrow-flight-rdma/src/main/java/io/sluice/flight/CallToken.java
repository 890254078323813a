package io.sluice.flight;

import io.sluice.transport.TransportConfig;
import io.sluice.transport.config.TransportKeys;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Base64;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import javax.crypto.spec.SecretKeySpec;
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
 * <p>The token is one-way: key = PBKDF2-HMAC-SHA256(secret, "sluice/flight-token/" | salt, 20000
 * iterations), token = base64url(HMAC-SHA256(key, "sluice/flight/bearer")), without padding. It
 * does not reveal the secret, and cannot stand in for it on the transport; whoever holds it can
 * make Flight calls, so on networks others can watch, use TLS locations ({@code grpc+tls}). The
 * salt is {@code sluice.transport.secretSalt}, the transport's. Stateless and thread safe.
 */
public final class CallToken {
  private static final int ITERATIONS = 20_000;
  private static final String DEFAULT_SALT = TransportKeys.SECRET_SALT.defaultValue();

  private CallToken() {}

  /** The token of {@code secret} with the default salt. */
  public static String derive(String secret) {
    return derive(secret, DEFAULT_SALT);
  }

  /**
   * The token of {@code secret} under {@code salt}.
   *
   * @throws IllegalArgumentException if the secret is empty
   */
  public static String derive(String secret, String salt) {
    if (secret == null || secret.isEmpty()) {
      throw new IllegalArgumentException("a Flight call token needs a secret (" + TransportKeys.SECRET.key() + ")");
    }
    try {
      PBEKeySpec spec = new PBEKeySpec(secret.toCharArray(),
          ("sluice/flight-token/" + salt).getBytes(StandardCharsets.UTF_8), ITERATIONS, 256);
      byte[] key = SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256").generateSecret(spec).getEncoded();
      spec.clearPassword();
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      byte[] token = mac.doFinal("sluice/flight/bearer".getBytes(StandardCharsets.US_ASCII));
      return Base64.getUrlEncoder().withoutPadding().encodeToString(token);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("PBKDF2WithHmacSHA256 or HmacSHA256 unavailable", e);
    }
  }

  /** The token of the secret and salt {@code config} holds; empty when it holds no secret. */
  public static Optional<String> of(TransportConfig config) {
    String secret = config.value(TransportKeys.SECRET);
    return secret.isEmpty() ? Optional.empty() : Optional.of(derive(secret, config.value(TransportKeys.SECRET_SALT)));
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
