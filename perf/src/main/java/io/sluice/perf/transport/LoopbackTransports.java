package io.sluice.perf.transport;

import io.sluice.transport.MessageHandler;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportOption;
import io.sluice.transport.Transports;
import io.sluice.transport.crypto.EngineChoice;
import java.util.Map;

/**
 * How both benchmark JVMs open transports: on loopback, with the run's shared secret. A measured
 * variant is a provider name, {@value #TCP_ENCRYPTED}: the tcp provider with {@code
 * sluice.transport.encryption=true} (AES-GCM on every frame) and the engine {@code auto} chooses
 * (OpenSSL's where it loads), or {@value #TCP_ENCRYPTED_JDK}: the same with the JDK's AES-GCM.
 * Stateless.
 */
final class LoopbackTransports {
  static final String HOST = "127.0.0.1";
  /** The environment variable that hands the run's secret to the server JVM. */
  static final String SECRET_ENV = "SLUICE_BENCH_SECRET";

  /** The variant that measures encrypted tcp with the engine a transport chooses by itself. */
  static final String TCP_ENCRYPTED = "tcp-aes";
  /** The variant that measures encrypted tcp with the JDK's AES-GCM. */
  static final String TCP_ENCRYPTED_JDK = "tcp-aes-jdk";

  private LoopbackTransports() {}

  /** The provider a variant runs on. */
  static String providerOf(String variant) {
    return encrypted(variant) ? "tcp" : variant;
  }

  /** Whether a variant encrypts. */
  static boolean encrypted(String variant) {
    return variant.equals(TCP_ENCRYPTED) || variant.equals(TCP_ENCRYPTED_JDK);
  }

  /** The {@code sluice.transport.encryption.engine} a variant's transports are opened with. */
  static String engineOf(String variant) {
    return variant.equals(TCP_ENCRYPTED_JDK) ? EngineChoice.JDK : EngineChoice.AUTO;
  }

  static Transport open(String variant, String secret, MessageHandler handler) throws TransportException {
    return Transports.open(TransportConfig.of(Map.of(
        TransportOption.PROVIDER.key(), providerOf(variant),
        TransportOption.SECRET.key(), secret,
        TransportOption.BIND_HOST.key(), HOST,
        TransportOption.ADVERTISE_HOST.key(), HOST,
        TransportOption.ENCRYPTION.key(), String.valueOf(encrypted(variant)),
        TransportOption.ENCRYPTION_ENGINE.key(), engineOf(variant))), handler);
  }
}
