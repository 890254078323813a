package io.sluice.perf.bench;

import io.sluice.transport.TransportProvider;
import io.sluice.transport.TransportUnavailableException;
import io.sluice.transport.Transports;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * What a benchmark whose two JVMs talk over loopback settles before it starts them: a secret of
 * its own for the run, and that every transport provider it measures is available here. Stateless
 * and thread safe.
 */
public final class Loopback {
  private static final SecureRandom RANDOM = new SecureRandom();

  private Loopback() {}

  /** A fresh secret for one run (16 random bytes, in hex), handed to the child JVM in its environment. */
  public static String newSecret() {
    byte[] seed = new byte[16];
    RANDOM.nextBytes(seed);
    return HexFormat.of().formatHex(seed);
  }

  /**
   * Fails unless the transport provider {@code provider} is available on this machine.
   *
   * @param label what the benchmark calls it (a variant such as {@code tcp-aes} of provider {@code tcp})
   * @param hint what the user can do instead, appended to the message; empty for nothing
   * @throws TransportUnavailableException naming the provider and why it is unavailable
   */
  public static void requireAvailable(String label, String provider, String hint)
      throws TransportUnavailableException {
    TransportProvider p = Transports.provider(provider);
    if (!p.isAvailable()) {
      throw new TransportUnavailableException("provider " + label + " is unavailable here ("
          + p.unavailabilityCause().map(Throwable::getMessage).orElse("no reason given") + ")"
          + (hint.isEmpty() ? "" : "; " + hint));
    }
  }
}
