package io.sluice.transport.verbs;

import io.sluice.transport.TransportContractTest;
import io.sluice.transport.TransportOption;
import io.sluice.transport.verbs.config.VerbsKeys;
import java.util.HashMap;
import java.util.Map;

/**
 * The transport contract on the verbs provider. Runs where an RDMA device is active (the
 * SoftRoCE lab); elsewhere every case is skipped. The suite's transports listen for tcp on
 * 127.0.0.1, as the contract expects; with a loopback bind host the verbs provider binds its
 * RDMA listener to the address of the machine's RDMA device (10.77.0.1 in the lab), which
 * peers learn over the authenticated tcp connection, so READs cross real queue pairs. With
 * {@code -Dsluice.rdma.address=...} the RDMA listener binds that device's address instead
 * ({@code sluice.transport.verbs.deviceAddress}): the lab runs the suite once on its RoCE
 * device and once on its iWARP device.
 */
class VerbsTransportContractTest extends TransportContractTest {
  /**
   * A verbs connection sets up two queue pairs after the tcp handshake; under the lab's
   * emulated CPUs that can take seconds, so the suite's 5 s connect deadline gets some room
   * (cases that test the deadline set their own).
   */
  static final Map<String, String> LAB_OPTIONS = Map.of(TransportOption.CONNECT_TIMEOUT_MS.key(), "30000");

  @Override
  public String provider() {
    return "verbs";
  }

  /**
   * {@link #LAB_OPTIONS}, plus the device address of {@code -Dsluice.rdma.address} when set: the
   * lab has two devices, and a loopback bind host alone would take whichever comes first.
   */
  static Map<String, String> labOptions() {
    String device = System.getProperty("sluice.rdma.address", "");
    if (device.isEmpty()) {
      return LAB_OPTIONS;
    }
    Map<String, String> options = new HashMap<>(LAB_OPTIONS);
    options.put(VerbsKeys.DEVICE_ADDRESS.key(), device);
    return options;
  }

  @Override
  protected Map<String, String> providerOptions() {
    return labOptions();
  }

  /**
   * A READ racing a revocation breaks its queue pair here, and the owner bars a reader that
   * breaks more than {@code PeerFaults.LIMIT} within a minute: the repeated race would end in
   * that bar, which is the defence working, not the contract failing.
   */
  @Override
  public boolean repeatedRevocationRaces() {
    return false;
  }
}
