package io.sluice.transport.verbs.rc;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaConnParam;
import com.ibm.disni.verbs.RdmaEventChannel;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One process's RDMA data path on one device: registers memory for remote READ, listens
 * for queue-pair connections and opens them to peers, with rdma_cm driven through DiSNI's
 * low-level API so that every step has a deadline and every rdma_cm error event is seen.
 *
 * <p>Admission: the listener accepts a connect request only from a source address that was
 * {@link #admit admitted}, once; any other request is refused (its id is destroyed, the
 * requester sees REJECTED). The intended caller admits sources it learned over an
 * authenticated control channel, so only authenticated peers ever hold a queue pair that
 * can READ this node's memory.
 *
 * <p>Threads: one CM event thread, one completion thread, one timer. Thread safe.
 */
public final class RdmaNode implements AutoCloseable {

  /** Limits of a node. */
  public record Settings(int maxInFlight, int cqEntries, long readTimeoutNanos, long connectTimeoutNanos) {
    public static Settings defaults() {
      return new Settings(64, 4096, TimeUnit.SECONDS.toNanos(30), TimeUnit.SECONDS.toNanos(10));
    }
  }

  private static final Logger LOG = LoggerFactory.getLogger(RdmaNode.class);
  private static final int LOCAL_WRITE = 1; // IBV_ACCESS_LOCAL_WRITE
  private static final int REMOTE_READ = 4; // IBV_ACCESS_REMOTE_READ
  private static final int CM_WAIT_SLICE_MS = 100;

  private final Settings settings;
  private final RdmaEventChannel channel;
  private final RdmaCmId listenId;
  private final IbvContext context;
  private final int contextFd;
  private final IbvPd pd;
  private final CompletionPoller poller;
  private final ScheduledExecutorService timer;
  private final Thread cmThread;
  private final InetSocketAddress address;
  private final AtomicLong wrIds = new AtomicLong();
  private final Map<Long, RdmaQueuePair.PendingRead> pending = new ConcurrentHashMap<>();
  private final Map<RdmaCmId, Consumer<RdmaCmEvent>> routes = new ConcurrentHashMap<>();
  private final Set<InetSocketAddress> admitted = ConcurrentHashMap.newKeySet();
  private final Set<RdmaQueuePair> queuePairs = ConcurrentHashMap.newKeySet();
  private final Set<RdmaCmId> served = ConcurrentHashMap.newKeySet();
  private volatile boolean open = true;

  private RdmaNode(Settings settings, InetSocketAddress bind) throws IOException {
    this.settings = settings;
    this.channel = RdmaEventChannel.createEventChannel();
    this.listenId = channel.createId(RdmaCm.RDMA_PS_TCP);
    listenId.bindAddr(bind);
    this.context = listenId.getVerbs();
    if (context == null) {
      throw new IOException(bind + " is not the address of an RDMA device (bind to the device's IP, not a wildcard)");
    }
    this.contextFd = context.getCmd_fd();
    this.pd = context.allocPd();
    this.poller = new CompletionPoller(context, settings.cqEntries(), this::completed);
    ScheduledThreadPoolExecutor timerPool = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "sluice-verbs-timer");
      t.setDaemon(true);
      return t;
    });
    timerPool.setRemoveOnCancelPolicy(true); // one timeout per READ, cancelled on completion
    this.timer = timerPool;
    listenId.listen(128);
    this.address = (InetSocketAddress) listenId.getSource();
    this.cmThread = new Thread(this::cmLoop, "sluice-verbs-cm");
    cmThread.setDaemon(true);
    cmThread.start();
  }

  /**
   * Opens a node listening on {@code bind}, which must be an address of an RDMA device
   * (port 0 picks a free port).
   */
  public static RdmaNode open(InetSocketAddress bind, Settings settings) throws IOException {
    return new RdmaNode(settings, bind);
  }

  /** The address peers connect to. */
  public InetSocketAddress address() {
    return address;
  }

  /**
   * Registers direct memory for remote READs, and as a local READ destination unless the
   * buffer is read-only (read-only mappings, such as committed files, cannot be registered
   * for local writes).
   */
  public RdmaRegion register(ByteBuffer buffer) throws IOException {
    if (!buffer.isDirect()) {
      throw new IllegalArgumentException("only direct buffers can be registered");
    }
    int access = buffer.isReadOnly() ? REMOTE_READ : REMOTE_READ | LOCAL_WRITE;
    IbvMr mr = pd.regMr(buffer, access).execute().free().getMr();
    return new RdmaRegion(mr, buffer);
  }

  /** Lets exactly one connect request from {@code source} (address and port) be accepted. */
  public void admit(InetSocketAddress source) {
    admitted.add(source);
  }

  /**
   * Starts a connection to {@code peer}: resolves the local address, so the returned
   * connection knows its source. Completes exceptionally if resolution fails or the connect
   * timeout passes.
   */
  public CompletableFuture<PreparedConnection> prepare(InetSocketAddress peer) {
    long deadline = System.nanoTime() + settings.connectTimeoutNanos();
    try {
      RdmaCmId id = channel.createId(RdmaCm.RDMA_PS_TCP);
      PreparedConnection connection = new PreparedConnection(this, id, peer, deadline);
      routes.put(id, connection::onEvent);
      timer.schedule(connection::deadlinePassed, settings.connectTimeoutNanos(), TimeUnit.NANOSECONDS);
      id.resolveAddr(null, peer, timeoutMillis(deadline));
      return connection.prepared();
    } catch (IOException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** Queue pairs currently open from this node. */
  public int queuePairCount() {
    return queuePairs.size();
  }

  private void cmLoop() {
    while (open) {
      try {
        RdmaCmEvent event = channel.getCmEvent(CM_WAIT_SLICE_MS);
        if (event == null) {
          continue;
        }
        event.ackEvent();
        if (event.getEvent() == PreparedConnection.Events.CONNECT_REQUEST) {
          onConnectRequest(event.getConnIdPriv());
        } else {
          Consumer<RdmaCmEvent> route = routes.get(event.getConnIdPriv());
          if (route != null) {
            route.accept(event);
          }
        }
      } catch (IOException | RuntimeException e) {
        if (open) {
          LOG.warn("rdma_cm event handling failed", e);
        }
      }
    }
  }

  private void onConnectRequest(RdmaCmId id) throws IOException {
    InetSocketAddress source = (InetSocketAddress) id.getDestination();
    if (source == null || !admitted.remove(source)) {
      LOG.warn("refused an RDMA connect request from {}: not admitted", source);
      id.destroyId();
      return;
    }
    IbvQPInitAttr attr = new IbvQPInitAttr();
    attr.setQp_type(IbvQP.IBV_QPT_RC);
    attr.setSend_cq(poller.cq());
    attr.setRecv_cq(poller.cq());
    attr.cap().setMax_send_wr(1);
    attr.cap().setMax_recv_wr(1);
    attr.cap().setMax_send_sge(1);
    attr.cap().setMax_recv_sge(1);
    id.createQP(pd, attr);
    served.add(id);
    routes.put(id, event -> {
      if (event.getEvent() == PreparedConnection.Events.DISCONNECTED) {
        dropServed(id);
      }
    });
    RdmaConnParam param = new RdmaConnParam();
    param.setRetry_count((byte) 7);
    param.setRnr_retry_count((byte) 7);
    id.accept(param);
  }

  private void dropServed(RdmaCmId id) {
    if (served.remove(id)) {
      routes.remove(id);
      try {
        id.destroyQP();
        id.destroyId();
      } catch (IOException e) {
        LOG.debug("destroying a served connection failed", e);
      }
    }
  }

  // --- for PreparedConnection and RdmaQueuePair ---

  RdmaQueuePair established(RdmaCmId id, IbvQP qp, String peer) {
    RdmaQueuePair queuePair = new RdmaQueuePair(this, id, qp, peer, settings.maxInFlight());
    queuePairs.add(queuePair);
    routes.put(id, event -> {
      if (event.getEvent() == PreparedConnection.Events.DISCONNECTED) {
        queuePair.peerDisconnected();
      }
    });
    return queuePair;
  }

  /** Destroys the id (and its QP) of a connection that did not complete; off the caller's lock. */
  void abandon(RdmaCmId id, boolean hasQueuePair) {
    routes.remove(id);
    timer.execute(() -> {
      try {
        if (hasQueuePair) {
          id.destroyQP();
        }
        id.destroyId();
      } catch (IOException e) {
        LOG.debug("destroying an abandoned connection failed", e);
      }
    });
  }

  void release(RdmaQueuePair queuePair) {
    queuePairs.remove(queuePair);
    timer.execute(queuePair::destroy);
  }

  long nextWrId() {
    return wrIds.incrementAndGet();
  }

  void track(RdmaQueuePair.PendingRead read) {
    pending.put(read.wrId, read);
  }

  void untrack(RdmaQueuePair.PendingRead read) {
    pending.remove(read.wrId);
  }

  private void completed(long wrId, int status) {
    RdmaQueuePair.PendingRead read = pending.remove(wrId);
    if (read != null) {
      read.queuePair().completed(read, status);
    }
  }

  ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
    return timer.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
  }

  long readTimeoutNanos() {
    return settings.readTimeoutNanos();
  }

  int timeoutMillis(long deadline) {
    return (int) Math.max(1, Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
  }

  int contextFd() {
    return contextFd;
  }

  IbvPd pd() {
    return pd;
  }

  IbvCQ cq() {
    return poller.cq();
  }

  int maxInFlight() {
    return settings.maxInFlight();
  }

  /**
   * Closes every queue pair (outstanding READs fail with PeerClosedException), drops
   * served connections, stops the threads and frees the device resources. Regions must be
   * closed first; the protection domain cannot be freed while any is registered.
   */
  @Override
  public void close() {
    if (!open) {
      return;
    }
    queuePairs.forEach(RdmaQueuePair::close);
    served.forEach(this::dropServed);
    open = false;
    try {
      cmThread.join(TimeUnit.SECONDS.toMillis(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    timer.shutdown();
    try {
      timer.awaitTermination(5, TimeUnit.SECONDS);
      listenId.destroyId();
    } catch (IOException e) {
      LOG.warn("destroying the listener failed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    poller.close();
    try {
      pd.deallocPd();
    } catch (Exception e) { // DiSNI declares `throws Exception`
      LOG.warn("freeing the protection domain failed (regions still registered?)", e);
    }
    try {
      channel.destroyEventChannel();
    } catch (IOException e) {
      LOG.warn("destroying the event channel failed", e);
    }
  }
}
