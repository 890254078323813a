package io.sluice.perf.transport;

import io.sluice.transport.MessageHandler;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportOption;
import io.sluice.transport.Transports;
import java.util.Map;

/** How both benchmark JVMs open transports: on loopback, with the run's shared secret. Stateless. */
final class LoopbackTransports {
  static final String HOST = "127.0.0.1";
  /** The environment variable that hands the run's secret to the server JVM. */
  static final String SECRET_ENV = "SLUICE_BENCH_SECRET";

  private LoopbackTransports() {}

  static Transport open(String provider, String secret, MessageHandler handler) throws TransportException {
    return Transports.open(TransportConfig.of(Map.of(
        TransportOption.PROVIDER.key(), provider,
        TransportOption.SECRET.key(), secret,
        TransportOption.BIND_HOST.key(), HOST,
        TransportOption.ADVERTISE_HOST.key(), HOST)), handler);
  }
}
