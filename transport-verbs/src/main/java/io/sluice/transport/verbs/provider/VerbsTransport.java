package io.sluice.transport.verbs.provider;

import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.NodeAddress;
import io.sluice.transport.RegionRevokedException;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.RemoteDescriptor;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportTimeoutException;
import io.sluice.transport.carrier.Carrier;
import io.sluice.transport.carrier.ControlService;
import io.sluice.transport.carrier.ControlServices;
import io.sluice.transport.carrier.Settings;
import io.sluice.transport.config.TransportKeys;
import io.sluice.transport.region.DirectMemory;
import io.sluice.transport.region.Region;
import io.sluice.transport.spi.AbstractTransport;
import io.sluice.transport.verbs.channel.RequestChannel;
import io.sluice.transport.verbs.channel.ResponderChannel;
import io.sluice.transport.verbs.config.VerbsKeys;
import io.sluice.transport.verbs.rc.ProtectionDomain;
import io.sluice.transport.verbs.rc.RdmaNode;
import io.sluice.transport.verbs.rc.RdmaQueuePair;
import io.sluice.transport.verbs.rc.RdmaRegion;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The verbs transport endpoint: a {@link Carrier} (listener, authentication, messages, this
 * transport's set-up as its {@link ControlService}) plus an {@link RdmaNode} on the RDMA device.
 * Each connection has two queue pairs: one carries its requests and answers as SEND/RECV (a {@link RequestChannel} here, a {@link ResponderChannel}
 * at the peer, which runs this transport's handler on the carrier's handler threads),
 * one its READs. A queue pair is accepted only from the source address an authenticated peer
 * admitted over its carrier connection, and only if that source is the peer's own address.
 *
 * <p>Regions are direct or mapped buffers; a descriptor carries the address and a random key.
 * The key table tells an authenticated peer whether a key is live, revoked or unknown, and
 * answers a live key that the peer may read with the rkey of a memory region registered for
 * that peer alone, in the peer's protection domain, where the queue pairs serving the peer
 * live ({@link Registration}). So the device enforces the grants: another peer's rkey, guessed
 * or stolen, names nothing in a peer's domain. Closing a region deregisters all its memory
 * regions at once, withdrawing a grant deregisters that peer's; the device refuses later
 * READs. A peer whose READs the device keeps refusing loses its admission ({@link PeerFaults}).
 * With {@code verbs.readDomains=shared} the queue pairs serving every peer's READs live in one
 * domain the peers share, where a region every peer may read is registered once; regions
 * restricted to some peers are then served to none. Message queue pairs, and the staged
 * messages their peer READs, stay in the peer's own domain either way.
 *
 * <p>Thread safe. Regions and connections belong to the caller; closing the transport closes
 * what is left (connections, regions, queue pairs, the completion queue, the protection domain).
 */
final class VerbsTransport extends AbstractTransport implements ControlService {
  private static final Logger LOG = LoggerFactory.getLogger(VerbsTransport.class);

  /** READs a message queue pair may have posted to fetch staged messages; more wait. */
  private static final int STAGED_READS = 8;

  private final RdmaNode node;
  private final long connectTimeoutNanos;
  private final long ioTimeoutNanos;
  private final int credit;
  private final int maxMessageBytes;
  /** verbs.readDomains=shared: peers READ through one domain, where each region every peer may read is registered once. */
  private final boolean sharedReadDomain;
  private final Map<Long, Registration> registrations = new ConcurrentHashMap<>();
  private final Set<VerbsConnection> connections = ConcurrentHashMap.newKeySet();
  private final SecureRandom random = new SecureRandom();
  private final PeerFaults faults = new PeerFaults(System::nanoTime);
  private final ScheduledExecutorService timer;
  private final Carrier tcp;
  /** Set once the device refused a file mapping; later file regions are copied at once. */
  private volatile boolean copyFileRegions;

  VerbsTransport(TransportConfig config, MessageHandler handler, RdmaNode node, long connectTimeoutNanos)
      throws TransportException {
    this.node = node;
    this.connectTimeoutNanos = connectTimeoutNanos;
    this.ioTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(config.value(TransportKeys.IO_TIMEOUT_MS));
    this.credit = config.value(TransportKeys.MAX_REQUESTS_IN_FLIGHT);
    this.maxMessageBytes = Math.toIntExact(config.value(TransportKeys.MAX_MESSAGE_BYTES));
    this.sharedReadDomain = VerbsKeys.SHARED.equals(config.value(VerbsKeys.READ_DOMAINS));
    ScheduledThreadPoolExecutor timerPool = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "sluice-verbs-timer");
      t.setDaemon(true);
      return t;
    });
    timerPool.setRemoveOnCancelPolicy(true); // connect and request deadlines, cancelled when met
    this.timer = timerPool;
    try {
      this.tcp = new Carrier(Settings.from(config), identity(), peers(), handler,
          ControlServices.of(SetupMessages.SERVICE, this), Optional.empty(), metrics());
    } catch (TransportException | RuntimeException e) {
      timer.shutdownNow();
      throw e;
    }
  }

  @Override
  public String provider() {
    return "verbs";
  }

  @Override
  public NodeAddress localAddress() {
    return tcp.localAddress();
  }

  @Override
  protected RegisteredRegion allocateChecked(long reader, int length) throws TransportException {
    ByteBuffer memory = allocateDirect(length);
    try {
      return register(memory, memory, reader);
    } catch (IOException e) {
      DirectMemory.free(memory);
      throw new TransportException("cannot register " + length + " bytes with the RDMA device: " + e.getMessage(), e);
    }
  }

  @Override
  protected RegisteredRegion registerFileChecked(Path file, long offset, int length) throws IOException {
    if (copyFileRegions) {
      try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
        checkCovers(ch, file, offset, length);
      }
      return registerCopy(file, offset, length);
    }
    MappedByteBuffer mapped = mapReadOnly(file, offset, length);
    try {
      return register(mapped, mapped, ANY_PEER);
    } catch (IOException e) {
      DirectMemory.free(mapped);
      if (!copyFileRegions) {
        LOG.info("The RDMA device refused a read-only file mapping ({}); file regions are copied into"
            + " registered memory from now on (kernels before 6.2 pin read-only memory for writing)", e.getMessage());
        copyFileRegions = true;
      }
    }
    return registerCopy(file, offset, length);
  }

  /** Registers a read-only copy of a file range, for devices that cannot pin the mapping. */
  private Region registerCopy(Path file, long offset, int length) throws IOException {
    ByteBuffer copy;
    try {
      copy = ByteBuffer.allocateDirect(length);
    } catch (OutOfMemoryError e) {
      throw new IOException("cannot copy " + length + " bytes of " + file + " into direct memory: " + e.getMessage(), e);
    }
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      while (copy.hasRemaining()) {
        if (ch.read(copy, offset + copy.position()) < 0) {
          throw new IOException(file + " shrank while being registered");
        }
      }
      return register(copy.clear().asReadOnlyBuffer(), copy, ANY_PEER);
    } catch (IOException | RuntimeException e) {
      DirectMemory.free(copy);
      throw new IOException("cannot register a copy of " + file + ": " + e.getMessage(), e);
    }
  }

  /**
   * Registers {@code memory} (the view the region hands out) whose storage {@code owner} is
   * freed when the last reference goes; the caller frees it if this throws. Only {@code reader}
   * is told the registration (see {@link #allocateFor}), unless it is {@link #ANY_PEER}.
   */
  private Region register(ByteBuffer memory, ByteBuffer owner, long reader) throws IOException {
    Optional<RdmaRegion> mr = memory.capacity() == 0 ? Optional.empty() : Optional.of(node.registerLocal(memory));
    long key = newKey();
    long address = mr.map(RdmaRegion::address).orElse(0L);
    RemoteDescriptor d = new RemoteDescriptor(nodeId(), address, memory.capacity(), key);
    Registration[] registration = new Registration[1];
    Runnable revoke = () -> {
      regions().revoke(key);
      registrations.remove(key);
      registration[0].revoke();
    };
    Runnable free = () -> {
      revoke.run(); // a region released to zero without close() is revoked first
      DirectMemory.free(owner);
    };
    Region region = newRegion(d, reader, memory, null, revoke, free);
    registration[0] = new Registration(region, memory, mr);
    region.onGrantWithdrawn(registration[0]::withdraw);
    registrations.put(key, registration[0]);
    return publish(region);
  }

  /** A random key no live region uses (never 0). */
  private long newKey() {
    while (true) {
      long key = random.nextLong();
      if (key != 0 && !registrations.containsKey(key)) {
        return key;
      }
    }
  }

  /** The registration of a READ destination: a live, writable region of this transport. */
  Optional<Registration> destination(RegisteredRegion local) {
    Registration r = registrations.get(local.descriptor().key());
    if (r == null || r.region() != local || !r.writable() || r.mrIfAny().isEmpty() || !local.isOpen()) {
      return Optional.empty();
    }
    return Optional.of(r);
  }

  /**
   * Set-up talks to the device (a peer's protection domain, registering a region in it, admitting
   * a queue pair), which can take milliseconds for a large region: off the selector thread.
   */
  @Override
  public boolean mayBlock() {
    return true;
  }

  /** Serves the set-up requests of authenticated peers (see {@link SetupMessages}). */
  @Override
  public ByteBuffer serve(long peerNode, InetAddress peerAddress, ByteBuffer request) throws TransportException {
    SetupMessages.Operation op = SetupMessages.operation(request);
    if (op == SetupMessages.Operation.NODE_INFO) {
      SetupMessages.expectEmpty(request, "NODE_INFO request");
      return SetupMessages.addressReply(node.address());
    }
    if (op == SetupMessages.Operation.ADMIT) {
      SetupMessages.Purpose purpose = SetupMessages.purpose(request);
      InetSocketAddress source = SetupMessages.address(request);
      AdmissionRule.check(source, peerAddress);
      if (faults.isBarred(peerNode)) {
        throw new TransportException("this node no longer admits RDMA queue pairs of peer node " + peerNode
            + ": the device refused too many of its READs");
      }
      admit(peerNode, peerAddress, purpose, source);
      return ByteBuffer.allocate(0);
    }
    long key = SetupMessages.key(request);
    Region region = regions().acquire(key, peerNode);
    try {
      Registration r = registrations.get(key);
      if (r == null || r.region() != region) {
        throw new RegionRevokedException("region was revoked by its owner");
      }
      Optional<RdmaRegion> mr = sharedReadDomain ? r.forEveryPeer(peerNode, node) : r.forPeer(peerNode, node);
      return SetupMessages.keyReply(new SetupMessages.KeyInfo(
          mr.map(RdmaRegion::address).orElse(0L), region.length(), mr.map(RdmaRegion::rkey).orElse(0)));
    } finally {
      region.release();
    }
  }

  /**
   * Admits one queue pair of {@code peerNode} from {@code source}: a message channel's, in the
   * peer's protection domain, or one that serves the peer's READs (whose faults count), in the
   * peer's domain or, with {@code verbs.readDomains=shared}, in the one every peer shares. A
   * message channel's requests reach the handler as coming from {@code peerAddress}, where the
   * peer's tcp session comes from.
   */
  private void admit(long peerNode, InetAddress peerAddress, SetupMessages.Purpose purpose, InetSocketAddress source)
      throws TransportException {
    try {
      boolean shared = sharedReadDomain && purpose == SetupMessages.Purpose.READS;
      ProtectionDomain domain = shared ? node.sharedDomain() : node.peerDomain(peerNode);
      try {
        if (purpose == SetupMessages.Purpose.MESSAGES) {
          node.admit(source, responderSizes(), domain, qp -> ResponderChannel.open(node, qp, credit, maxMessageBytes,
              peerNode, (peer, message) -> tcp.runHandler(peer, peerAddress, message)));
        } else {
          node.admit(source, new RdmaQueuePair.Sizes(1, 0, 0), domain, qp -> qp.onFailure(cause -> {
            if (qp.faultedByPeer()) {
              faults.record(peerNode);
            }
          }));
        }
      } finally {
        domain.release(); // the admission holds its own reference
      }
    } catch (IOException e) {
      throw new TransportException("cannot admit an RDMA queue pair: " + e.getMessage(), e);
    }
  }

  /** How many peers' memory regions the region with {@code key} has (for tests of the isolation). */
  int peerRegistrations(long key) {
    Registration r = registrations.get(key);
    return r == null ? 0 : r.peerRegistrations();
  }

  /** Whether the region with {@code key} is registered in the domain every peer shares (for tests). */
  boolean sharedRegistration(long key) {
    Registration r = registrations.get(key);
    return r != null && r.sharedRegistration();
  }

  RdmaNode node() {
    return node;
  }

  boolean barred(long peerNode) {
    return faults.isBarred(peerNode);
  }

  RdmaQueuePair.Sizes readSizes() {
    return new RdmaQueuePair.Sizes(VerbsOpener.MAX_READS_IN_FLIGHT, 0, 0);
  }

  RdmaQueuePair.Sizes requesterSizes() {
    return new RdmaQueuePair.Sizes(STAGED_READS, RequestChannel.sendSlots(credit), RequestChannel.receiveSlots(credit));
  }

  private RdmaQueuePair.Sizes responderSizes() {
    return new RdmaQueuePair.Sizes(STAGED_READS, ResponderChannel.sendSlots(credit), ResponderChannel.receiveSlots(credit));
  }

  RequestChannel openRequestChannel(RdmaQueuePair qp) throws IOException {
    return RequestChannel.open(node, qp, credit, maxMessageBytes, timer, ioTimeoutNanos);
  }

  int maxMessageBytes() {
    return maxMessageBytes;
  }

  @Override
  protected CompletableFuture<Connection> connectOpen(NodeAddress peer) {
    CompletableFuture<Connection> result = new CompletableFuture<>();
    var deadline = timer.schedule(() -> result.completeExceptionally(new TransportTimeoutException(
        "connecting to " + peer + " and setting up RDMA took longer than "
            + TimeUnit.NANOSECONDS.toMillis(connectTimeoutNanos) + " ms")), connectTimeoutNanos, TimeUnit.NANOSECONDS);
    tcp.connect(peer).whenComplete((conn, error) -> {
      if (error != null) {
        deadline.cancel(false);
        result.completeExceptionally(PeerKeys.unwrap(error));
        return;
      }
      VerbsConnection vc = new VerbsConnection(this, conn, node);
      connections.add(vc);
      vc.start().whenComplete((x, e) -> {
        deadline.cancel(false);
        if (e != null) {
          vc.close();
          Throwable cause = PeerKeys.unwrap(e);
          result.completeExceptionally(cause instanceof TransportException ? cause
              : new TransportException("RDMA set-up with " + peer + " failed: " + cause, cause));
        } else if (!result.complete(vc) || isClosing()) {
          vc.close();
        }
      });
    });
    return result;
  }

  void connectionClosed(VerbsConnection c) {
    connections.remove(c);
  }

  @Override
  protected void stopTraffic() {
    for (VerbsConnection c : connections) {
      c.close();
    }
    tcp.close();
  }

  /**
   * Regions still referenced elsewhere were revoked before this: their memory regions are gone,
   * so the protection domain can be freed.
   */
  @Override
  protected void releaseResources() {
    node.close();
    timer.shutdownNow();
  }

  @Override
  public String toString() {
    return "VerbsTransport[" + localAddress() + ", rdma " + node.address() + "]";
  }
}
