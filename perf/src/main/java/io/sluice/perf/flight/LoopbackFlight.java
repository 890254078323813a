package io.sluice.perf.flight;

import io.sluice.flight.FlightOption;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportOption;
import java.util.HashMap;
import java.util.Map;

/** How both benchmark JVMs configure Flight servers and clients: loopback only, the run's secret. Stateless. */
final class LoopbackFlight {
  static final String HOST = "127.0.0.1";
  /** The environment variable that hands the run's secret to the server JVM. */
  static final String SECRET_ENV = "SLUICE_BENCH_SECRET";
  private static final String FLIGHT_OPTION_PREFIX = "sluice.flight.";

  private LoopbackFlight() {}

  /**
   * A data plane over {@code provider} with the shared {@code secret}, bound and advertised on
   * loopback; plus any Flight option ({@code sluice.flight.*}) set as a system property, so a run
   * can try other settings (the server JVM gets the driver's {@code -Dsluice.*} flags).
   */
  static TransportConfig config(String provider, String secret) {
    return config(provider, secret, Map.of());
  }

  /**
   * A client's configuration as {@link #config(String, String)}, with {@code
   * sluice.flight.verifyReads} set to {@code verifyReads} whatever the system properties say: the
   * benchmark measures the reader with and without the check, and each cell must be what its name
   * says.
   */
  static TransportConfig clientConfig(String provider, String secret, boolean verifyReads) {
    return config(provider, secret, Map.of(), Map.of(FlightOption.VERIFY_READS.key(), String.valueOf(verifyReads)));
  }

  /**
   * A server's configuration: the driver's puts are accepted, whatever their size (the benchmark
   * puts the whole table).
   */
  static TransportConfig serverConfig(String provider, String secret) {
    return config(provider, secret, Map.of(FlightOption.PUTS.key(), "true", FlightOption.MAX_PUT_BYTES.key(),
        String.valueOf(Long.MAX_VALUE)));
  }

  private static TransportConfig config(String provider, String secret, Map<String, String> server) {
    return config(provider, secret, server, Map.of());
  }

  /** {@code defaults}, then the {@code sluice.flight.*} system properties, then {@code fixed}. */
  private static TransportConfig config(String provider, String secret, Map<String, String> defaults,
      Map<String, String> fixed) {
    Map<String, String> m = new HashMap<>(defaults);
    for (String name : System.getProperties().stringPropertyNames()) {
      if (name.startsWith(FLIGHT_OPTION_PREFIX)) {
        m.put(name, System.getProperty(name));
      }
    }
    m.putAll(fixed);
    m.put(TransportOption.PROVIDER.key(), provider);
    m.put(TransportOption.SECRET.key(), secret);
    m.put(TransportOption.BIND_HOST.key(), HOST);
    m.put(TransportOption.ADVERTISE_HOST.key(), HOST);
    return TransportConfig.of(m);
  }
}
