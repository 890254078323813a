package io.sluice.transport.tcp;

import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.NodeAddress;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.RemoteDescriptor;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportUnavailableException;
import io.sluice.transport.carrier.Carrier;
import io.sluice.transport.carrier.CarrierConnection;
import io.sluice.transport.carrier.ControlServices;
import io.sluice.transport.carrier.DataPath;
import io.sluice.transport.carrier.DataPathFactory;
import io.sluice.transport.carrier.PeerPath;
import io.sluice.transport.carrier.Settings;
import io.sluice.transport.region.DirectMemory;
import io.sluice.transport.region.Region;
import io.sluice.transport.spi.AbstractTransport;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The tcp transport: a {@link Carrier} that serves READ frames straight from registered memory
 * on its selector threads ({@link RegionReads}), and, with a {@link DataPath}, reads the peers that path reaches
 * through it instead (shared memory for same-host peers). Regions are plain direct buffers, or
 * memory the path published. Thread safe.
 */
final class TcpTransport extends AbstractTransport {
  private final String provider;
  private final Optional<DataPath> path;
  private final boolean pathRequired;
  private final Carrier carrier;

  /**
   * @param provider the provider's name, as {@link #provider()} reports it
   * @param pathFactory opens the data path beside READ frames, if any
   * @param pathRequired whether a peer the path does not reach is refused
   */
  TcpTransport(String provider, Settings settings, MessageHandler handler, Optional<DataPathFactory> pathFactory,
      boolean pathRequired) throws TransportException {
    this.provider = provider;
    this.pathRequired = pathRequired;
    this.path = pathFactory.isPresent() ? Optional.of(pathFactory.get().open(settings, nodeId())) : Optional.empty();
    ControlServices services = path.map(p -> ControlServices.of(p.serviceId(), p.controlService(regions())))
        .orElse(ControlServices.none());
    try {
      this.carrier = new Carrier(settings, identity(), peers(), handler, services,
          Optional.of(new RegionReads(regions())), metrics());
    } catch (TransportException | RuntimeException e) {
      path.ifPresent(DataPath::close);
      throw e;
    }
  }

  /** The carrier, for tests of its bounds. */
  Carrier carrier() {
    return carrier;
  }

  @Override
  public String provider() {
    return provider;
  }

  @Override
  public NodeAddress localAddress() {
    return carrier.localAddress();
  }

  @Override
  protected RegisteredRegion allocateChecked(long reader, int length) throws TransportException {
    long key = regions().newKey();
    if (path.isPresent()) {
      return register(key, reader, path.get().allocate(key, length));
    }
    return register(key, reader, new DataPath.Published(allocateDirect(length), null, () -> { }, () -> { }));
  }

  @Override
  protected RegisteredRegion registerFileChecked(Path file, long offset, int length) throws IOException {
    ByteBuffer mapped = mapReadOnly(file, offset, length);
    long key = regions().newKey();
    if (path.isEmpty()) {
      return register(key, ANY_PEER, new DataPath.Published(mapped, null, () -> { }, () -> { }));
    }
    DataPath.Published p;
    try {
      p = path.get().publishFile(key, file, offset, mapped);
    } catch (TransportException e) {
      DirectMemory.free(mapped);
      throw e;
    }
    return register(key, ANY_PEER, p);
  }

  private Region register(long key, long reader, DataPath.Published p) {
    ByteBuffer memory = p.memory();
    RemoteDescriptor d = new RemoteDescriptor(nodeId(), 0, memory.capacity(), key);
    Runnable revoke = () -> {
      regions().revoke(key);
      p.revoke().run();
    };
    Runnable free = () -> {
      DirectMemory.free(memory);
      p.release().run();
    };
    return publish(newRegion(d, reader, memory, p.location(), revoke, free));
  }

  @Override
  protected CompletableFuture<Connection> connectOpen(NodeAddress peer) {
    return carrier.connect(peer, this::attachPath);
  }

  /** Reads the peer through the data path if it reaches the peer; refuses it if it must and does not. */
  private Connection attachPath(CarrierConnection c) throws IOException {
    if (path.isPresent()) {
      Optional<PeerPath> peerPath = path.get().attach(c, carrier.settings().connectTimeoutNanos());
      if (peerPath.isPresent()) {
        c.usePath(path.get().name(), peerPath.get());
      } else if (pathRequired) {
        throw new TransportUnavailableException("provider " + provider + ": peer " + c.peer()
            + " is not reachable through " + path.get().name() + " (not on this host, or it has none)");
      }
    }
    return c;
  }

  @Override
  protected void stopTraffic() {
    carrier.close();
  }

  @Override
  protected void releaseResources() {
    path.ifPresent(DataPath::close);
  }

  @Override
  public String toString() {
    return "TcpTransport[" + provider + ", " + carrier.localAddress() + "]";
  }
}
