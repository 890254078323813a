package io.sluice.transport;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;

/**
 * The contract every transport provider passes. A provider's test is a thin subclass that names
 * the provider and any options it needs; the cases live in the contract interfaces this class
 * combines, grouped by concern. Each test runs only where the provider is available, gets a fresh
 * {@link TransportHarness}, and fails if it leaks a region or an shm file.
 */
@Timeout(120)
public abstract class TransportContractTest
    implements RegionContract,
        ReadContract,
        ReadFailureContract,
        SecurityContract,
        MessageContract,
        CloseContract,
        PeerCrashContract {
  private TransportHarness harness;

  /** Provider-specific options added to every transport's configuration. */
  protected Map<String, String> providerOptions() {
    return Map.of();
  }

  @Override
  public final TransportHarness harness() {
    if (harness == null) {
      throw new IllegalStateException("no test is running");
    }
    return harness;
  }

  @BeforeEach
  final void openHarness() {
    TransportProvider p = Transports.provider(provider());
    assumeTrue(p.isAvailable(), () -> "provider " + provider() + " unavailable: "
        + p.unavailabilityCause().map(Throwable::toString).orElse("no reason given"));
    harness = new TransportHarness(provider(), providerOptions());
  }

  /** The leak check: fails the test that left a region registered or a file in its shm folder. */
  @AfterEach
  final void closeHarness() {
    if (harness != null) {
      TransportHarness h = harness;
      harness = null;
      h.close();
    }
  }
}
