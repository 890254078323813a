package io.sluice.transport.verbs.rc;

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
 * <p>Threads: one CM event thread, one thread per completion queue (queues are added as
 * queue pairs need entries, see {@link CompletionQueues}), one timer. Thread safe.
 */
public final class RdmaNode implements AutoCloseable {

  /**
   * Limits of a node: entries per completion queue and how many queues it may open (one
   * thread each), and the READ and connect deadlines.
   */
  public record Settings(int cqEntries, int maxCompletionQueues, long readTimeoutNanos, long connectTimeoutNanos) {}

  /** What the listener does with an admitted connect request. */
  public interface Acceptor {
    /**
     * Called on the CM thread with the new queue pair before the request is accepted, so it
     * can post receives; throwing refuses the request.
     */
    void accept(RdmaQueuePair queuePair) throws Exception;
  }

  private record Admission(RdmaQueuePair.Sizes sizes, Acceptor acceptor) {}

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
  private final CompletionQueues completionQueues;
  private final ScheduledExecutorService timer;
  private final Thread cmThread;
  private final InetSocketAddress address;
  private final AtomicLong wrIds = new AtomicLong();
  private final Map<Long, WorkRequest> pending = new ConcurrentHashMap<>();
  private final Map<RdmaCmId, Consumer<RdmaCmEvent>> routes = new ConcurrentHashMap<>();
  private final Map<InetSocketAddress, Admission> admitted = new ConcurrentHashMap<>();
  private final Set<RdmaQueuePair> queuePairs = ConcurrentHashMap.newKeySet();
  private volatile boolean open = true;
  /** Guards registration against the protection domain being freed; guards pdFreed. */
  private final Object pdLock = new Object();
  private boolean pdFreed;

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
    this.completionQueues = new CompletionQueues(context, settings.cqEntries(), settings.maxCompletionQueues(), this::completed);
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
    return registerWith(buffer, buffer.isReadOnly() ? REMOTE_READ : REMOTE_READ | LOCAL_WRITE);
  }

  /** Registers writable direct memory for local use only (receives, READ landing): peers cannot READ it. */
  public RdmaRegion registerLocal(ByteBuffer buffer) throws IOException {
    if (!buffer.isDirect() || buffer.isReadOnly()) {
      throw new IllegalArgumentException("only writable direct buffers can be registered for local use");
    }
    return registerWith(buffer, LOCAL_WRITE);
  }

  /** Registers under the lock that keeps the protection domain alive (late callers get an IOException). */
  private RdmaRegion registerWith(ByteBuffer buffer, int access) throws IOException {
    synchronized (pdLock) {
      if (pdFreed) {
        throw new IOException("the RDMA node is closed");
      }
      IbvMr mr = pd.regMr(buffer, access).execute().free().getMr();
      return new RdmaRegion(mr, buffer);
    }
  }

  /**
   * Lets exactly one connect request from {@code source} (address and port) be accepted
   * within the connect timeout, with a queue pair of {@code sizes} handed to {@code acceptor}.
   */
  public void admit(InetSocketAddress source, RdmaQueuePair.Sizes sizes, Acceptor acceptor) {
    Admission admission = new Admission(sizes, acceptor);
    admitted.put(source, admission);
    timer.schedule(() -> admitted.remove(source, admission), settings.connectTimeoutNanos(), TimeUnit.NANOSECONDS);
  }

  /**
   * Starts a connection to {@code peer}: resolves the local address, so the returned
   * connection knows its source. Completes exceptionally if resolution fails or the connect
   * timeout passes.
   */
  public CompletableFuture<PreparedConnection> prepare(InetSocketAddress peer, RdmaQueuePair.Sizes sizes) {
    long deadline = System.nanoTime() + settings.connectTimeoutNanos();
    try {
      RdmaCmId id = channel.createId(RdmaCm.RDMA_PS_TCP);
      PreparedConnection connection = new PreparedConnection(this, id, peer, sizes, deadline);
      routes.put(id, connection::onEvent);
      timer.schedule(connection::deadlinePassed, settings.connectTimeoutNanos(), TimeUnit.NANOSECONDS);
      id.resolveAddr(null, peer, timeoutMillis(deadline));
      return connection.prepared();
    } catch (IOException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** Queue pairs currently open on this node, opened or accepted. */
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
    Admission admission = source == null ? null : admitted.remove(source);
    if (admission == null) {
      LOG.warn("refused an RDMA connect request from {}: not admitted", source);
      id.destroyId();
      return;
    }
    CompletionQueues.Reservation reservation;
    IbvQP qp;
    try {
      reservation = completionQueues.reserve(admission.sizes().completions());
    } catch (IOException e) {
      LOG.warn("refused an RDMA connect request from {}: {}", source, e.getMessage());
      id.destroyId();
      return;
    }
    try {
      qp = id.createQP(pd, queuePairAttributes(admission.sizes(), reservation));
    } catch (IOException | RuntimeException e) {
      completionQueues.release(reservation);
      LOG.warn("refused an RDMA connect request from {}: creating its queue pair failed", source, e);
      id.destroyId();
      return;
    }
    RdmaQueuePair queuePair = established(id, qp, String.valueOf(source), admission.sizes(), reservation);
    try {
      admission.acceptor().accept(queuePair);
      RdmaConnParam param = new RdmaConnParam();
      param.setRetry_count((byte) PreparedConnection.RETRY_COUNT);
      param.setRnr_retry_count((byte) PreparedConnection.RNR_RETRY_COUNT);
      id.accept(param);
    } catch (Exception e) {
      LOG.warn("refused an RDMA connect request from {}", source, e);
      queuePair.close();
    }
  }

  // --- for PreparedConnection and RdmaQueuePair ---

  /** Reserves completion entries for a queue pair about to be created. */
  CompletionQueues.Reservation reserveCompletions(RdmaQueuePair.Sizes sizes) throws IOException {
    return completionQueues.reserve(sizes.completions());
  }

  void returnCompletions(CompletionQueues.Reservation reservation) {
    completionQueues.release(reservation);
  }

  static IbvQPInitAttr queuePairAttributes(RdmaQueuePair.Sizes sizes, CompletionQueues.Reservation reservation) {
    IbvQPInitAttr attr = new IbvQPInitAttr();
    attr.setQp_type(IbvQP.IBV_QPT_RC);
    attr.setSend_cq(reservation.poller().cq());
    attr.setRecv_cq(reservation.poller().cq());
    attr.cap().setMax_send_wr(sizes.sendQueue());
    attr.cap().setMax_recv_wr(Math.max(1, sizes.receives()));
    attr.cap().setMax_send_sge(1);
    attr.cap().setMax_recv_sge(1);
    return attr;
  }

  RdmaQueuePair established(RdmaCmId id, IbvQP qp, String peer, RdmaQueuePair.Sizes sizes,
      CompletionQueues.Reservation reservation) {
    RdmaQueuePair queuePair = new RdmaQueuePair(this, id, qp, peer, sizes, reservation);
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
    routes.remove(queuePair.cmId());
    timer.execute(queuePair::destroy);
  }

  long nextWrId() {
    return wrIds.incrementAndGet();
  }

  void track(WorkRequest request) {
    pending.put(request.wrId(), request);
  }

  void untrack(WorkRequest request) {
    pending.remove(request.wrId(), request);
  }

  private void completed(long wrId, int status, int byteLength) {
    WorkRequest request = pending.remove(wrId);
    if (request != null) {
      request.completed(status, byteLength);
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

  /** Completion queues opened so far (each has its own thread). */
  public int completionQueueCount() {
    return completionQueues.queueCount();
  }

  /**
   * Closes every queue pair (outstanding work fails with PeerClosedException), stops the threads and frees the device resources. Regions must be
   * closed first; the protection domain cannot be freed while any is registered.
   */
  @Override
  public void close() {
    if (!open) {
      return;
    }
    queuePairs.forEach(RdmaQueuePair::close);
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
    // Queue pairs are destroyed on the timer, which has finished: the queues are free now.
    completionQueues.close();
    synchronized (pdLock) {
      pdFreed = true;
      try {
        pd.deallocPd();
      } catch (Exception e) { // DiSNI declares `throws Exception`
        LOG.warn("freeing the protection domain failed (regions still registered?)", e);
      }
    }
    try {
      channel.destroyEventChannel();
    } catch (IOException e) {
      LOG.warn("destroying the event channel failed", e);
    }
  }
}
