package io.sluice.transport;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sluice.transport.crypto.AesGcmEngine;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;

/**
 * The whole transport contract on tcp with {@code sluice.transport.encryption=true}: every frame
 * is sealed with AES-GCM, READ bodies included (same-host shm off so READs cross the socket), by
 * OpenSSL's engine; {@link JdkEngineEncryptedTcpTransportContractTest} runs it with the JDK's.
 */
class EncryptedTcpTransportContractTest extends TcpTransportContractTest {
  /** The AES-GCM engine every transport of this suite is made to use. */
  protected AesGcmEngine engine() {
    return AesGcmEngine.OPENSSL;
  }

  @BeforeEach
  void engineAvailable() {
    assumeTrue(engine().unavailabilityCause().isEmpty(),
        () -> engine().id() + " unavailable: " + engine().unavailabilityCause().orElse(""));
  }

  @Override
  protected Map<String, String> providerOptions() {
    Map<String, String> options = new HashMap<>(super.providerOptions());
    options.put(TransportOption.ENCRYPTION.key(), "true");
    options.put(TransportOption.ENCRYPTION_ENGINE.key(), engine().id());
    return options;
  }
}
