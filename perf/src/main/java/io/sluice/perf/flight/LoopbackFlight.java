package io.sluice.perf.flight;

import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportOption;
import java.util.Map;

/** How both benchmark JVMs configure Flight servers and clients: loopback only, the run's secret. Stateless. */
final class LoopbackFlight {
  static final String HOST = "127.0.0.1";
  /** The environment variable that hands the run's secret to the server JVM. */
  static final String SECRET_ENV = "SLUICE_BENCH_SECRET";

  private LoopbackFlight() {}

  /** A data plane over {@code provider} with the shared {@code secret}, bound and advertised on loopback. */
  static TransportConfig config(String provider, String secret) {
    return TransportConfig.of(Map.of(
        TransportOption.PROVIDER.key(), provider,
        TransportOption.SECRET.key(), secret,
        TransportOption.BIND_HOST.key(), HOST,
        TransportOption.ADVERTISE_HOST.key(), HOST));
  }
}
