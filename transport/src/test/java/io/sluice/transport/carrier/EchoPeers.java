package io.sluice.transport.carrier;

import static io.sluice.transport.TransportTestSupport.message;
import static io.sluice.transport.TransportTestSupport.text;

import io.sluice.transport.MessageHandler;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportHarness;
import io.sluice.transport.TransportOption;
import io.sluice.transport.handshake.Handshake;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * tcp transports without shared memory, so every byte crosses the carrier's socket, whose
 * handler answers every request with {@code "ok:" + request}: the peers of the tests that tamper
 * with frames on the way. Closing it closes every transport it opened and runs the harness's
 * leak check. One per test instance; not thread safe.
 */
final class EchoPeers implements AutoCloseable {
  private static final MessageHandler ECHO = (peer, m) -> CompletableFuture.completedFuture(message("ok:" + text(m)));
  private final TransportHarness harness = new TransportHarness("tcp",
      Map.of(TransportOption.SHM_ENABLED.key(), "false"));

  /** Opens a transport, encrypted or not, with {@code options} on top. */
  Transport open(boolean encrypted, Map<String, String> options) throws Exception {
    Map<String, String> all = new HashMap<>(options);
    all.put(TransportOption.ENCRYPTION.key(), String.valueOf(encrypted));
    return harness.open(ECHO, all);
  }

  @Override
  public void close() {
    harness.close();
  }

  /** The HELLO flags of a side that asks for encryption, or not. */
  static int flags(boolean encrypted) {
    return encrypted ? Handshake.FLAG_ENCRYPT : 0;
  }
}
