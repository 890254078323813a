package io.sluice.flight.client;

import io.sluice.flight.CallToken;
import io.sluice.flight.FlightOption;
import io.sluice.transport.TransportConfig;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Builds the plain {@code FlightClient}s this module talks through, configured alike: every call
 * presents the secret's {@link CallToken} when {@code config} holds a secret, and a {@code
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
    FlightClient.Builder b = FlightClient.builder(allocator, location);
    CallToken.of(config).ifPresent(token -> b.intercept(CallToken.clientMiddleware(token)));
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
