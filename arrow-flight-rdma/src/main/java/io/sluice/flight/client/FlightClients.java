package io.sluice.flight.client;

import io.sluice.flight.CallToken;
import io.sluice.flight.FlightOption;
import io.sluice.transport.TransportConfig;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Builds the plain {@code FlightClient}s this module talks through, configured alike: every call
 * presents a {@link CallToken} of the secret for the location it connects to, renewed before it
 * expires, when {@code config} holds a secret, and a {@code
 * grpc+tls} location trusts the certificates of {@link FlightOption#TLS_TRUSTED_CERTIFICATES} when
 * set (else the JVM's default trust). Stateless.
 */
public final class FlightClients {
  private FlightClients() {}

  /**
   * A Flight client of {@code location}, owned by the caller.
   *
   * @throws IllegalArgumentException if the trusted-certificates file cannot be read (naming the key)
   */
  public static FlightClient open(BufferAllocator allocator, Location location, TransportConfig config) {
    return open(allocator, location, config, CallToken.of(config));
  }

  /**
   * A Flight client of {@code location} whose calls present tokens of {@code key} minted for that
   * location ({@link RenewingToken}), owned by the caller.
   */
  public static FlightClient open(BufferAllocator allocator, Location location, TransportConfig config,
      Optional<CallToken.Key> key) {
    FlightClient.Builder b = FlightClient.builder(allocator, location);
    key.ifPresent(k -> b.intercept(CallToken.clientMiddleware(new RenewingToken(k, CallToken.audienceOf(location),
        Duration.ofMillis(config.value(FlightOption.TOKEN_VALIDITY_MS)), Clock.systemUTC()))));
    String trusted = config.value(FlightOption.TLS_TRUSTED_CERTIFICATES);
    if (!trusted.isEmpty()) {
      try {
        b.trustedCertificates(new ByteArrayInputStream(Files.readAllBytes(Path.of(trusted))));
      } catch (IOException | RuntimeException e) {
        throw new IllegalArgumentException(FlightOption.TLS_TRUSTED_CERTIFICATES.key() + "=" + trusted
            + ": cannot read the certificates (" + e + ")", e);
      }
    }
    return b.build();
  }
}
