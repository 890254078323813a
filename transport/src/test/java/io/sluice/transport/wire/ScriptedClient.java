package io.sluice.transport.wire;

import io.sluice.transport.MessageHandler;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportHarness;
import java.util.Map;

/**
 * The side under test when a {@link ScriptedServer} plays the peer: a harness, one client
 * transport that rejects requests, and a destination of {@link #DESTINATION_BYTES} on it.
 * Closing it frees the destination and then closes the harness, whose leak check runs last.
 */
public record ScriptedClient(TransportHarness harness, Transport client, RegisteredRegion dst) implements AutoCloseable {
  public static final int DESTINATION_BYTES = 1 << 20;

  /** Opens a harness for {@code provider} with {@code harnessOptions}, and the client with {@code clientOptions}. */
  public static ScriptedClient open(String provider, Map<String, String> harnessOptions,
      Map<String, String> clientOptions) throws Exception {
    TransportHarness harness = new TransportHarness(provider, harnessOptions);
    try {
      Transport client = harness.open(MessageHandler.REJECT_ALL, clientOptions);
      return new ScriptedClient(harness, client, client.allocate(DESTINATION_BYTES));
    } catch (Exception | Error e) {
      harness.close();
      throw e;
    }
  }

  @Override
  public void close() {
    try {
      dst.close();
    } finally {
      harness.close();
    }
  }
}
