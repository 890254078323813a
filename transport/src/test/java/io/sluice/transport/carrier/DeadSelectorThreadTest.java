package io.sluice.transport.carrier;

import static io.sluice.transport.TransportTestSupport.assertFailsWith;
import static io.sluice.transport.TransportTestSupport.await;
import static io.sluice.transport.TransportTestSupport.failureOf;
import static io.sluice.transport.TransportTestSupport.message;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.MessageHandler;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.TransportUnavailableException;
import io.sluice.transport.crypto.NodeIdentity;
import java.io.IOException;
import java.net.ProtocolFamily;
import java.nio.channels.DatagramChannel;
import java.nio.channels.Pipe;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.AbstractSelector;
import java.nio.channels.spi.SelectorProvider;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A selector thread of a carrier dies (its selector fails under it): the operations pending on
 * its connections fail at once with a {@link TransportUnavailableException} that names the
 * thread, not at their deadlines, and the carrier takes no new connections.
 */
@Timeout(60)
class DeadSelectorThreadTest {
  /** The platform's selectors, each kept so that the test can make it fail. */
  private static final class KeptSelectors extends SelectorProvider {
    private final SelectorProvider platform = SelectorProvider.provider();
    final List<AbstractSelector> opened = new CopyOnWriteArrayList<>();

    @Override
    public AbstractSelector openSelector() throws IOException {
      AbstractSelector s = platform.openSelector();
      opened.add(s);
      return s;
    }

    @Override
    public DatagramChannel openDatagramChannel() throws IOException {
      return platform.openDatagramChannel();
    }

    @Override
    public DatagramChannel openDatagramChannel(ProtocolFamily family) throws IOException {
      return platform.openDatagramChannel(family);
    }

    @Override
    public Pipe openPipe() throws IOException {
      return platform.openPipe();
    }

    @Override
    public ServerSocketChannel openServerSocketChannel() throws IOException {
      return platform.openServerSocketChannel();
    }

    @Override
    public SocketChannel openSocketChannel() throws IOException {
      return platform.openSocketChannel();
    }
  }

  /** One selector thread, and an I/O deadline far beyond the test's. */
  private static Settings settings() {
    Map<String, String> m = new HashMap<>(TransportTestSupport.baseConfig("tcp", "/dev/shm"));
    m.put("sluice.transport.shm.enabled", "false");
    m.put("sluice.transport.ioThreads", "1");
    m.put("sluice.transport.ioTimeoutMs", "120000");
    return Settings.from(TransportConfig.of(m));
  }

  @Test
  void pendingWorkFailsAtOnceAndNewConnectionsAreRefused() throws Exception {
    MessageHandler neverAnswers = (peer, request) -> new CompletableFuture<>();
    KeptSelectors selectors = new KeptSelectors();
    try (Carrier server = new Carrier(settings(), NodeIdentity.generate(), neverAnswers, ControlServices.none(), Optional.empty());
        Carrier client = new Carrier(settings(), NodeIdentity.generate(), MessageHandler.REJECT_ALL, ControlServices.none(),
            Optional.empty(), selectors);
        CarrierConnection c = await(client.connect(server.localAddress()))) {
      CompletableFuture<?> pending = c.request(message("never answered"));
      assertEquals(1, selectors.opened.size());

      selectors.opened.get(0).close();

      Throwable failure = failureOf(pending);
      assertTrue(chainHas(failure, TransportUnavailableException.class, "sluice-io-"),
          "the pending request failed with " + TransportTestSupport.describe(failure));
      assertFailsWith(TransportUnavailableException.class, client.connect(server.localAddress()));
    }
  }

  private static boolean chainHas(Throwable t, Class<?> type, String text) {
    for (Throwable x = t; x != null; x = x.getCause()) {
      if (type.isInstance(x) && x.getMessage().contains(text)) {
        return true;
      }
    }
    return false;
  }
}
