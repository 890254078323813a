package io.sluice.transport;

import java.util.Map;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A tcp transport on 127.0.0.1, opened before each test and closed after it, for tests of code
 * that needs registered memory but no peer. Register it with
 * {@code @RegisterExtension final LoopbackTransport loopback = new LoopbackTransport("name");}.
 * One instance per test class instance; not thread safe.
 */
public final class LoopbackTransport implements BeforeEachCallback, AfterEachCallback {
  private final String secret;
  private Transport transport;

  /** @param name names the test; the transport's secret is made from it */
  public LoopbackTransport(String name) {
    this.secret = "loopback-test-secret/" + name;
  }

  @Override
  public void beforeEach(ExtensionContext context) throws TransportException {
    transport = Transports.open(TransportConfig.of(Map.of("sluice.transport.provider", "tcp",
        "sluice.transport.secret", secret, "sluice.transport.bindHost", "127.0.0.1")), MessageHandler.REJECT_ALL);
  }

  @Override
  public void afterEach(ExtensionContext context) {
    transport.close();
  }

  /** The open transport of the running test. */
  public Transport transport() {
    if (transport == null) {
      throw new IllegalStateException("no test is running");
    }
    return transport;
  }
}
