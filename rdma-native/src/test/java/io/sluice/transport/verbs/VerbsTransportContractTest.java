package io.sluice.transport.verbs;

import io.sluice.transport.TransportContractTest;

/**
 * The transport contract on the verbs provider. Runs where an RDMA device is active (the
 * SoftRoCE lab); elsewhere every case is skipped. The suite's transports listen for tcp on
 * 127.0.0.1, as the contract expects; with a loopback bind host the verbs provider binds its
 * RDMA listener to the address of the machine's RDMA device (10.77.0.1 in the lab), which
 * peers learn over the authenticated tcp connection, so READs cross real queue pairs.
 */
class VerbsTransportContractTest extends TransportContractTest {
  @Override
  public String provider() {
    return "verbs";
  }
}
