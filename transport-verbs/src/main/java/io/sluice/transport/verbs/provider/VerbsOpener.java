package io.sluice.transport.verbs.provider;

import io.sluice.transport.verbs.config.VerbsKeys;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportProvider;
import io.sluice.transport.TransportUnavailableException;
import io.sluice.transport.config.TransportKeys;
import io.sluice.transport.verbs.rc.RdmaNode;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Opens verbs transports inside the DiSNI class loader; {@link
 * io.sluice.transport.verbs.VerbsTransportProvider} (outside it) answers availability and
 * delegates here. The RDMA listener binds the configured bind host, which must be an address
 * of an RDMA device; with a wildcard or loopback bind host, the first address of an up,
 * non-loopback interface that belongs to a device (peers learn it over the authenticated tcp
 * connection). Stateless; thread safe.
 */
public final class VerbsOpener implements TransportProvider {
  /** READs one queue pair keeps posted; the rest wait in order. */
  static final int MAX_READS_IN_FLIGHT = 64;
  /** Entries of one completion queue; a node opens more queues (one thread each) as queue pairs need them. */
  static final int COMPLETION_QUEUE_ENTRIES = 8192;
  static final int MAX_COMPLETION_QUEUES = 32;

  @Override
  public String name() {
    return "verbs";
  }

  @Override
  public Optional<Throwable> unavailabilityCause() {
    return Optional.empty();
  }

  @Override
  public Transport open(TransportConfig config, MessageHandler handler) throws TransportException {
    long connectNanos = TimeUnit.MILLISECONDS.toNanos(config.value(TransportKeys.CONNECT_TIMEOUT_MS));
    long ioNanos = TimeUnit.MILLISECONDS.toNanos(config.value(TransportKeys.IO_TIMEOUT_MS));
    if (config.value(TransportKeys.SECRET).isEmpty()) {
      throw new IllegalArgumentException(TransportKeys.SECRET.key() + " must be set");
    }
    long busyPollNanos = TimeUnit.MICROSECONDS.toNanos(config.value(VerbsKeys.BUSY_POLL_US));
    RdmaNode.Settings settings = new RdmaNode.Settings(COMPLETION_QUEUE_ENTRIES, MAX_COMPLETION_QUEUES, ioNanos,
        connectNanos, busyPollNanos);
    String device = config.value(VerbsKeys.DEVICE_ADDRESS);
    RdmaNode node = device.isEmpty() ? openNode(config.value(TransportKeys.BIND_HOST), settings)
        : openDevice(device, settings);
    try {
      return new VerbsTransport(config, handler, node, connectNanos);
    } catch (TransportException | RuntimeException e) {
      node.close();
      throw e;
    }
  }

  private static RdmaNode openNode(String bindHost, RdmaNode.Settings settings) throws TransportUnavailableException {
    List<InetAddress> candidates = new ArrayList<>();
    try {
      InetAddress bind = InetAddress.getByName(bindHost);
      if (bind.isAnyLocalAddress() || bind.isLoopbackAddress()) {
        // No RDMA device serves loopback; peers of a loopback listener are on this host and
        // reach any of its device addresses.
        candidates.addAll(interfaceAddresses());
      } else {
        candidates.add(bind);
      }
    } catch (IOException e) {
      throw new TransportUnavailableException("verbs: cannot resolve bind host " + bindHost + ": " + e.getMessage(), e);
    }
    List<String> tried = new ArrayList<>();
    for (InetAddress a : candidates) {
      try {
        return RdmaNode.open(new InetSocketAddress(a, 0), settings);
      } catch (IOException | RuntimeException e) {
        tried.add(a.getHostAddress() + " (" + e.getMessage() + ")");
      }
    }
    throw new TransportUnavailableException("verbs: no RDMA device at " + (tried.isEmpty() ? bindHost : tried)
        + "; set " + TransportKeys.BIND_HOST.key() + " to the IP address of an RDMA device");
  }

  /** Binds exactly {@code device}, the configured address of an RDMA device. */
  private static RdmaNode openDevice(String device, RdmaNode.Settings settings) throws TransportUnavailableException {
    InetAddress address;
    try {
      address = InetAddress.getByName(device);
    } catch (IOException e) {
      throw new TransportUnavailableException("verbs: cannot resolve " + VerbsKeys.DEVICE_ADDRESS.key() + " "
          + device + ": " + e.getMessage(), e);
    }
    try {
      return RdmaNode.open(new InetSocketAddress(address, 0), settings);
    } catch (IOException | RuntimeException e) {
      throw new TransportUnavailableException("verbs: no RDMA device at " + VerbsKeys.DEVICE_ADDRESS.key() + " "
          + device + " (" + e.getMessage() + ")", e);
    }
  }

  private static List<InetAddress> interfaceAddresses() throws SocketException {
    List<InetAddress> out = new ArrayList<>();
    for (NetworkInterface nif : Collections.list(NetworkInterface.getNetworkInterfaces())) {
      if (nif.isUp() && !nif.isLoopback()) {
        for (InetAddress a : Collections.list(nif.getInetAddresses())) {
          if (a instanceof Inet4Address) {
            out.add(a);
          }
        }
      }
    }
    return out;
  }
}
