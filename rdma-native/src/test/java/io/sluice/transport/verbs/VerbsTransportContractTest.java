package io.sluice.transport.verbs;

import io.sluice.transport.TransportContractTest;
import io.sluice.transport.TransportOption;
import java.util.Map;

/**
 * The transport contract on the verbs provider. Runs where an RDMA device is active (the
 * SoftRoCE lab); elsewhere every case is skipped. The device's IP address comes from
 * {@code -Dsluice.rdma.address=...} or the environment variable {@code SLUICE_RDMA_ADDRESS};
 * both the tcp listener and the RDMA listener bind it.
 */
class VerbsTransportContractTest extends TransportContractTest {
  static String rdmaAddress() {
    String property = System.getProperty("sluice.rdma.address");
    if (property != null && !property.isBlank()) {
      return property.trim();
    }
    String env = System.getenv("SLUICE_RDMA_ADDRESS");
    return env == null || env.isBlank() ? "0.0.0.0" : env.trim();
  }

  @Override
  public String provider() {
    return "verbs";
  }

  @Override
  protected Map<String, String> providerOptions() {
    String address = rdmaAddress();
    return address.equals("0.0.0.0")
        ? Map.of(TransportOption.BIND_HOST.key(), address)
        : Map.of(TransportOption.BIND_HOST.key(), address, TransportOption.ADVERTISE_HOST.key(), address);
  }
}
