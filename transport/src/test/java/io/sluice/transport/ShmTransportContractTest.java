package io.sluice.transport;

/** The transport contract on the shm provider: peers on this host map each other's regions. */
class ShmTransportContractTest extends TransportContractTest {
  @Override
  public String provider() {
    return "shm";
  }
}
