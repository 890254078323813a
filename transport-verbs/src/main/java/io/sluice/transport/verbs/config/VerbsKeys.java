package io.sluice.transport.verbs.config;

import io.sluice.transport.config.Check;
import io.sluice.transport.config.ConfigKey;
import io.sluice.transport.config.Parsers;
import io.sluice.transport.config.TransportKeys;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The configuration keys only the verbs provider reads, declared once with their parsers. Shared
 * between the application's class loader, where {@link io.sluice.transport.verbs.VerbsTransportProvider}
 * declares them for validation on every host, and the DiSNI loader, where the provider reads them.
 */
public final class VerbsKeys {

  /**
   * How long a completion thread polls an empty completion queue before it arms it and
   * sleeps, and how long a caller waiting for a READ or an answer polls the queues itself
   * before it blocks. 0 turns busy polling off (every completion then wakes the thread).
   */
  public static final ConfigKey<Long> BUSY_POLL_US = ConfigKey.of(TransportKeys.PREFIX + "verbs.busyPoll", "50us",
      "verbs: how long a completion thread, or a caller waiting for a READ or an answer, polls the completion"
          + " queue before it sleeps; 0 when no core can be spared for it.",
      Parsers.duration(TimeUnit.MICROSECONDS), Check.between(0, TimeUnit.SECONDS.toMicros(1)));

  /**
   * The IP address of the RDMA device the RDMA listener binds, where the bind host alone does
   * not tell it: a wildcard or loopback bind host (then the first interface address that
   * belongs to a device is taken), or a machine with several devices, e.g. a RoCE and an iWARP
   * NIC. Empty: derived from the bind host.
   */
  public static final ConfigKey<String> DEVICE_ADDRESS = ConfigKey.of(TransportKeys.PREFIX + "verbs.deviceAddress",
      "", "verbs: IP address of the RDMA device the RDMA listener binds; empty: the bind host, or with a wildcard"
          + " or loopback bind host the first interface address that belongs to an RDMA device.",
      Parsers.string());

  /** Every verbs key. */
  public static final List<ConfigKey<?>> ALL = List.of(BUSY_POLL_US, DEVICE_ADDRESS);

  private VerbsKeys() {}
}
