package io.sluice.transport.verbs.config;

import io.sluice.transport.Transports;
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

  /** {@link #READ_DOMAINS}: every peer READs through a protection domain of its own. */
  public static final String PER_PEER = "per-peer";
  /** {@link #READ_DOMAINS}: every peer READs through one protection domain they share. */
  public static final String SHARED = "shared";

  /**
   * Where the memory peers READ is registered. {@code per-peer}: in a protection domain of each
   * reading peer, once per peer, so the device keeps a peer to the regions it was allowed;
   * pinned memory and translation entries grow with the number of peers. {@code shared}: every
   * peer's READ queue pair lives in one domain, where each region every peer may read ({@link
   * io.sluice.transport.Transport#ANY_PEER}) is registered once; a region restricted to some
   * peers is then not served to any peer, since the device could not keep the others out. Nor
   * does the device keep a region to the peers told its key: once one peer looked a region up,
   * another can READ it with a guessed rkey. For applications whose every peer may read every
   * region it registers (Spark's map outputs); Flight and Hadoop RPC refuse it.
   */
  public static final ConfigKey<String> READ_DOMAINS = ConfigKey.of(Transports.VERBS_READ_DOMAINS,
      PER_PEER, "verbs: per-peer registers memory for each reading peer in a protection domain of its own;"
          + " shared registers memory that every peer may read once, in one domain all peers READ through, and"
          + " serves no region restricted to some peers.",
      Parsers.choice(PER_PEER, SHARED));

  /** Every verbs key. */
  public static final List<ConfigKey<?>> ALL = List.of(BUSY_POLL_US, DEVICE_ADDRESS, READ_DOMAINS);

  private VerbsKeys() {}
}
