package io.sluice.transport;

import java.util.Map;

/**
 * The whole transport contract on tcp with {@code sluice.transport.encryption=true}: every frame
 * is sealed with AES-GCM, READ bodies included (same-host shm off so READs cross the socket).
 */
class EncryptedTcpTransportContractTest extends TransportContractTest {
  @Override
  public String provider() {
    return "tcp";
  }

  @Override
  protected Map<String, String> providerOptions() {
    return Map.of(TransportOption.SHM_ENABLED.key(), "false", TransportOption.ENCRYPTION.key(), "true");
  }
}
