package io.sluice.transport;

/**
 * What every part of the transport contract suite needs from the concrete test class: the
 * provider under test and the harness of the running test. The contract parts are interfaces
 * with default test methods, combined by {@link TransportContractTest}.
 */
public interface TransportContractFixture {
  /** The provider name under test, as {@link Transports#provider} knows it. */
  String provider();

  /** The harness of the running test; fresh for every test method. */
  TransportHarness harness();

  /**
   * True when {@link Transport#localAddress()} is a plain TCP listener that a raw socket can
   * reach (tcp and shm); the cases that throw raw bytes at the listener run only then.
   */
  default boolean rawTcpListener() {
    return true;
  }

  /**
   * True when a peer may race READs against revocations of the same owner's regions again and
   * again (tcp and shm). On verbs each such race breaks a queue pair, which the owner counts as a
   * fault of the reader and bars it after a few within a minute, as it must for a peer probing
   * keys; there the single race of {@code regionClosedWhileReadsAreInFlight} runs instead.
   */
  default boolean repeatedRevocationRaces() {
    return true;
  }
}
