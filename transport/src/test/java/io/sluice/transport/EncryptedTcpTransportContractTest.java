package io.sluice.transport;

import java.util.HashMap;
import java.util.Map;

/**
 * The whole transport contract on tcp with {@code sluice.transport.encryption=true}: every frame
 * is sealed with AES-GCM, READ bodies included (same-host shm off so READs cross the socket).
 */
class EncryptedTcpTransportContractTest extends TcpTransportContractTest {
  @Override
  protected Map<String, String> providerOptions() {
    Map<String, String> options = new HashMap<>(super.providerOptions());
    options.put(TransportOption.ENCRYPTION.key(), "true");
    return options;
  }
}
