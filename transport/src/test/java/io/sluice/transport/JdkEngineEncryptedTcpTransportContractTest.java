package io.sluice.transport;

import io.sluice.transport.crypto.AesGcmEngine;

/** {@link EncryptedTcpTransportContractTest} with the JDK's AES-GCM: the engine where OpenSSL is missing. */
class JdkEngineEncryptedTcpTransportContractTest extends EncryptedTcpTransportContractTest {
  @Override
  protected AesGcmEngine engine() {
    return AesGcmEngine.JDK;
  }
}
