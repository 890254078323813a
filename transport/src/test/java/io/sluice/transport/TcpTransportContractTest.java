package io.sluice.transport;

import java.util.Map;

/** The transport contract on the tcp provider, with same-host shm reads off so READs cross the socket. */
class TcpTransportContractTest extends TransportContractTest {
  @Override
  public String provider() {
    return "tcp";
  }

  @Override
  protected Map<String, String> providerOptions() {
    return Map.of(TransportOption.SHM_ENABLED.key(), "false");
  }
}
