package io.sluice.transport.spi;

import io.sluice.transport.Connection;
import io.sluice.transport.NodeAddress;
import io.sluice.transport.PeerClosedException;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.RemoteDescriptor;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportException;
import io.sluice.transport.crypto.NodeIdentity;
import io.sluice.transport.crypto.PeerIdentities;
import io.sluice.transport.metrics.TransportMetrics;
import io.sluice.transport.region.Region;
import io.sluice.transport.region.RegionTable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The skeleton every provider's transport shares: its identity (a key pair made at open and the
 * node id derived from it, {@link NodeIdentity}, which its {@code Carrier} proves to peers), the
 * table of registered regions, the count of live ones, the checks every call makes, and the
 * order of closing (stop the traffic, then revoke and free the regions left, logging each as a
 * leak, then release the provider's resources). A provider says how memory is backed and
 * registered ({@link #allocateChecked}, {@link #registerFileChecked}), how it connects ({@link
 * #connectOpen}), and what it stops and releases.
 *
 * <p>Thread safe, as subclasses must be.
 */
public abstract class AbstractTransport implements Transport {
  private static final Logger LOG = LoggerFactory.getLogger(AbstractTransport.class);

  private final NodeIdentity identity = NodeIdentity.generate();
  private final PeerIdentities peers = new PeerIdentities();
  private final RegionTable regions = new RegionTable();
  private final AtomicInteger liveRegions = new AtomicInteger();
  private final TransportMetrics metrics = new TransportMetrics();
  private volatile boolean closing;
  private final Object closeLock = new Object();

  @Override
  public final long nodeId() {
    return identity.nodeId();
  }

  @Override
  public final byte[] identityKey() {
    return identity.publicKey();
  }

  @Override
  public final java.util.Optional<byte[]> peerIdentityKey(long node) {
    return peers.keyOf(node);
  }

  @Override
  public final TransportMetrics metrics() {
    return metrics;
  }

  /** Who this transport is, for the carrier that proves it to peers. */
  protected final NodeIdentity identity() {
    return identity;
  }

  /**
   * The key behind each peer node id in use, which the provider's carrier binds at each handshake
   * and its regions' readers and grants hold.
   */
  protected final PeerIdentities peers() {
    return peers;
  }

  /** The regions peers may READ, by key. */
  protected final RegionTable regions() {
    return regions;
  }

  protected final boolean isClosing() {
    return closing;
  }

  protected final void checkOpen() throws TransportException {
    if (closing) {
      throw new TransportException("transport is closed");
    }
  }

  @Override
  public final RegisteredRegion allocateFor(long reader, int length) throws TransportException {
    if (length < 0) {
      throw new IllegalArgumentException("negative length " + length);
    }
    checkOpen();
    return allocateChecked(reader, length);
  }

  /** Allocates {@code length} (at least 0) zeroed bytes for {@code reader} on an open transport. */
  protected abstract RegisteredRegion allocateChecked(long reader, int length) throws TransportException;

  /** Allocates {@code length} zeroed bytes of direct memory. */
  protected static ByteBuffer allocateDirect(int length) throws TransportException {
    try {
      return ByteBuffer.allocateDirect(length);
    } catch (OutOfMemoryError e) {
      throw new TransportException("cannot allocate " + length + " bytes of direct memory: " + e.getMessage(), e);
    }
  }

  @Override
  public final RegisteredRegion registerFile(Path file, long offset, long length) throws IOException {
    checkOpen();
    if (offset < 0 || length < 0 || length > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("cannot register [" + offset + ", +" + length + ") of " + file
          + ": offset must be >= 0 and length in 0.." + Integer.MAX_VALUE);
    }
    return registerFileChecked(file.toAbsolutePath(), offset, (int) length);
  }

  /** Registers bytes {@code offset .. offset + length} of the absolute path {@code file}, checked. */
  protected abstract RegisteredRegion registerFileChecked(Path file, long offset, int length) throws IOException;

  /**
   * Maps {@code length} bytes of {@code file} from {@code offset} read-only.
   *
   * @throws IOException if the file is shorter than that range
   */
  protected static MappedByteBuffer mapReadOnly(Path file, long offset, int length) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      checkCovers(ch, file, offset, length);
      return ch.map(FileChannel.MapMode.READ_ONLY, offset, length);
    }
  }

  /** @throws IOException unless {@code file}, open as {@code ch}, has bytes up to {@code offset + length} */
  protected static void checkCovers(FileChannel ch, Path file, long offset, int length) throws IOException {
    long size = ch.size();
    if (offset + length > size) {
      throw new IOException("cannot register [" + offset + ", +" + length + ") of " + file + ": file has " + size
          + " bytes");
    }
  }

  /**
   * A new region, counted live until {@code free} has run. Peers find it once it is {@link
   * #publish}ed; a provider attaches what it needs in between.
   */
  protected final Region newRegion(RemoteDescriptor d, long reader, ByteBuffer memory, Region.ShmLocation location,
      Runnable revoke, Runnable free) {
    long bytes = memory.capacity();
    Region region = new Region(d, reader, memory, location, revoke, () -> {
      free.run();
      liveRegions.decrementAndGet();
      metrics.regionFreed(bytes);
    }, peers);
    liveRegions.incrementAndGet();
    metrics.regionRegistered(bytes);
    return region;
  }

  /** Makes {@code region} known to peers by its key. */
  protected final Region publish(Region region) {
    regions.add(region);
    return region;
  }

  @Override
  public final CompletableFuture<Connection> connect(NodeAddress peer) {
    if (closing) {
      return CompletableFuture.failedFuture(new PeerClosedException("transport is closed"));
    }
    return connectOpen(peer);
  }

  /** Connects to {@code peer} and authenticates, on a transport that was open when asked. */
  protected abstract CompletableFuture<Connection> connectOpen(NodeAddress peer);

  @Override
  public final int liveRegionCount() {
    return liveRegions.get();
  }

  /**
   * Closes once. A caller that comes while another closes waits for that close to end, so that
   * whoever returns from here finds the traffic stopped and the regions revoked.
   */
  @Override
  public final void close() {
    synchronized (closeLock) {
      if (closing) {
        return;
      }
      closing = true;
      stopTraffic();
      for (Region r : regions.liveRegions()) {
        LOG.warn("Transport closed with a region still registered: {}", r);
        r.close();
      }
      releaseResources();
    }
  }

  /** Closes connections, listeners and threads, so no peer reaches a region any more. */
  protected abstract void stopTraffic();

  /** Releases what the regions needed until they were freed (a device, an arena, a timer). */
  protected abstract void releaseResources();
}
