package io.sluice.transport.verbs.rc;

import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaConnParam;
import com.ibm.disni.verbs.RdmaEventChannel;
import io.sluice.transport.TransportException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
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
 * <p>Isolation: memory a peer may READ lives in that peer's {@link ProtectionDomain}
 * ({@link #peerDomain}), and so do the queue pairs that serve it; the node's own domain
 * ({@link #localDomain}) holds only memory no peer may READ. The device therefore refuses a
 * peer's READ of memory shown to another peer, whatever key it presents. A caller that gives
 * this up for memory every peer may read registers it once in the {@link #sharedDomain} and
 * puts the queue pairs serving READs there.
 *
 * <p>rdma_cm ids are created, read from and destroyed through {@link CmIds}, one lock with
 * event retrieval. Every event other than ESTABLISHED on a connected id ends its queue pair.
 *
 * <p>Threads: one CM event thread, one thread per completion queue (queues are added as
 * queue pairs need entries, see {@link CompletionQueues}), one timer. Thread safe.
 */
public final class RdmaNode implements AutoCloseable {

  /**
   * Limits of a node: entries per completion queue and how many queues it may open (one
   * thread each), the READ and connect deadlines, and how long a completion thread (or a
   * caller waiting on a {@link PolledFuture}) polls an empty completion queue before it
   * sleeps (0: never; then every completion wakes the thread).
   */
  public record Settings(int cqEntries, int maxCompletionQueues, long readTimeoutNanos, long connectTimeoutNanos,
      long busyPollNanos) {
    public Settings {
      if (busyPollNanos < 0) {
        throw new IllegalArgumentException("busy-poll time must not be negative: " + busyPollNanos + " ns");
      }
    }

    /** Without busy polling. */
    public Settings(int cqEntries, int maxCompletionQueues, long readTimeoutNanos, long connectTimeoutNanos) {
      this(cqEntries, maxCompletionQueues, readTimeoutNanos, connectTimeoutNanos, 0);
    }
  }

  /** What the listener does with an admitted connect request. */
  public interface Acceptor {
    /**
     * Called on the CM thread with the new queue pair before the request is accepted, so it
     * can post receives; throwing refuses the request.
     */
    void accept(RdmaQueuePair queuePair) throws Exception;
  }

  private record Admission(RdmaQueuePair.Sizes sizes, ProtectionDomain domain, Acceptor acceptor) {}

  private static final Logger LOG = LoggerFactory.getLogger(RdmaNode.class);
  /** Devices whose fabric this process has logged: each is logged once, at the first node on it. */
  private static final Set<String> LOGGED_DEVICES = ConcurrentHashMap.newKeySet();
  /** Event retrieval holds the id lock this long at most, so id creation waits no longer. */
  private static final int CM_WAIT_SLICE_MS = 20;

  private final Settings settings;
  private final RdmaEventChannel channel;
  private final CmIds ids;
  private final RdmaCmId listenId;
  private final IbvContext context;
  private final int contextFd;
  private final ProtectionDomain localDomain;
  private final CompletionQueues completionQueues;
  private final ScheduledThreadPoolExecutor timer;
  private final Thread cmThread;
  private final InetSocketAddress address;
  private final DeviceQuery.Device device;
  private final AtomicLong slots = new AtomicLong();
  private final Map<Long, WorkRequest> pending = new ConcurrentHashMap<>();
  private final Map<RdmaCmId, Consumer<RdmaCmEvent>> routes = new ConcurrentHashMap<>();
  private final Map<InetSocketAddress, Admission> admitted = new ConcurrentHashMap<>();
  private final Set<RdmaQueuePair> queuePairs = ConcurrentHashMap.newKeySet();
  private volatile boolean open = true;
  private final ProtectionDomains domains;
  /** Guards the hand-off of the event channel between close() and the CM thread. */
  private final Object channelLock = new Object();
  private boolean cmThreadDone;
  private boolean channelWanted = true;

  private RdmaNode(Settings settings, InetSocketAddress bind) throws IOException {
    this.settings = settings;
    this.channel = RdmaEventChannel.createEventChannel();
    this.ids = new CmIds(channel);
    this.listenId = ids.create();
    listenId.bindAddr(bind);
    this.context = listenId.getVerbs();
    if (context == null) {
      throw new IOException(bind + " is not the address of an RDMA device (bind to the device's IP, not a wildcard)");
    }
    this.contextFd = context.getCmd_fd();
    this.device = DeviceQuery.query(listenId);
    if (LOGGED_DEVICES.add(device.name())) {
      LOG.info("RDMA device {} at {}; {}", device.describe(), bind.getAddress().getHostAddress(),
          RetryPolicy.describe());
      if (device.fabric() == DeviceQuery.Fabric.IWARP) {
        LOG.info("RDMA device {}: READs of at most {} bytes whose source crosses a {} B boundary are posted as two"
            + " READs (a soft-iWARP peer replies to them with wrong bytes; transport-verbs/README.md, READ integrity)",
            device.name(), PageCrossingReads.SHORT_READ_BYTES, PageCrossingReads.PAGE_BYTES);
      }
    }
    if (!RetryPolicy.deadlineCoversRetries(settings.readTimeoutNanos())) {
      LOG.warn("the READ deadline of {} ms is shorter than the {} ms a device may resend an unanswered READ:"
          + " such READs fail with a timeout rather than their cause", TimeUnit.NANOSECONDS.toMillis(
          settings.readTimeoutNanos()), TimeUnit.NANOSECONDS.toMillis(RetryPolicy.giveUpNanos()));
    }
    this.domains = new ProtectionDomains(context);
    this.localDomain = domains.local();
    this.completionQueues = new CompletionQueues(context, settings.cqEntries(), settings.maxCompletionQueues(),
        settings.busyPollNanos(), this::completed);
    ScheduledThreadPoolExecutor timerPool = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "sluice-verbs-timer");
      t.setDaemon(true);
      return t;
    });
    timerPool.setRemoveOnCancelPolicy(true);
    this.timer = timerPool;
    // READ deadlines are checked by one sweep, not a timer per READ.
    long sweep = Math.max(TimeUnit.MILLISECONDS.toNanos(1), Math.min(TimeUnit.MILLISECONDS.toNanos(100),
        settings.readTimeoutNanos() / 10));
    timer.scheduleWithFixedDelay(this::sweepDeadlines, sweep, sweep, TimeUnit.NANOSECONDS);
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

  /** The device this node's listener is bound to, and so its fabric. */
  public DeviceQuery.Device device() {
    return device;
  }

  /**
   * Registers direct memory in the node's own domain, for local use only: a READ destination
   * when writable. No peer can READ it.
   */
  public RdmaRegion registerLocal(ByteBuffer buffer) throws IOException {
    return localDomain.registerLocal(buffer);
  }

  /** The node's own protection domain: local memory only, and the queue pairs that READ from peers. */
  public ProtectionDomain localDomain() {
    return localDomain;
  }

  /**
   * The protection domain of {@code peer} (an authenticated peer's node id), created on first
   * use; the caller owns one reference and {@link ProtectionDomain#release releases} it.
   */
  public ProtectionDomain peerDomain(long peer) throws IOException {
    if (!open) {
      throw new IOException("the RDMA node is closed");
    }
    return domains.peer(peer);
  }

  /**
   * The protection domain every peer shares, created on first use, for memory that every
   * authenticated peer may READ and the queue pairs that serve those READs; the caller owns
   * one reference and {@link ProtectionDomain#release releases} it. A queue pair here reaches
   * every region registered here, whichever peer it serves.
   */
  public ProtectionDomain sharedDomain() throws IOException {
    if (!open) {
      throw new IOException("the RDMA node is closed");
    }
    return domains.shared();
  }

  /** Protection domains of peers that are alive now (not the shared one). */
  public int peerDomainCount() {
    return domains.peerCount();
  }

  void retain(ProtectionDomain d) throws IOException {
    domains.retain(d);
  }

  /**
   * Lets exactly one connect request from {@code source} (address and port) be accepted
   * within the connect timeout, with a queue pair of {@code sizes} in {@code domain} (which
   * must be the domain of the peer that asked) handed to {@code acceptor}. The caller keeps
   * its own reference to the domain.
   */
  public void admit(InetSocketAddress source, RdmaQueuePair.Sizes sizes, ProtectionDomain domain, Acceptor acceptor)
      throws IOException {
    retain(domain); // held by the admission, handed to the queue pair or released when it lapses
    Admission admission = new Admission(sizes, domain, acceptor);
    Admission replaced = admitted.put(source, admission);
    if (replaced != null) {
      replaced.domain().release();
    }
    timer.schedule(() -> {
      if (admitted.remove(source, admission)) {
        domain.release();
      }
    }, settings.connectTimeoutNanos(), TimeUnit.NANOSECONDS);
  }

  /**
   * Starts a connection to {@code peer}: resolves the local address, so the returned
   * connection knows its source. Completes exceptionally if resolution fails or the connect
   * timeout passes.
   */
  public CompletableFuture<PreparedConnection> prepare(InetSocketAddress peer, RdmaQueuePair.Sizes sizes) {
    return prepare(peer, sizes, localDomain);
  }

  /**
   * As {@link #prepare(InetSocketAddress, RdmaQueuePair.Sizes)}, with the queue pair in
   * {@code domain}: the peer's domain when the queue pair's peer may READ memory through it
   * (the caller keeps its own reference).
   */
  public CompletableFuture<PreparedConnection> prepare(InetSocketAddress peer, RdmaQueuePair.Sizes sizes,
      ProtectionDomain domain) {
    long deadline = System.nanoTime() + settings.connectTimeoutNanos();
    try {
      retain(domain); // held by the connection, then by its queue pair
    } catch (IOException e) {
      return CompletableFuture.failedFuture(e);
    }
    try {
      RdmaCmId id = ids.create();
      PreparedConnection connection = new PreparedConnection(this, id, peer, sizes, domain, deadline);
      routes.put(id, connection::onEvent);
      timer.schedule(connection::deadlinePassed, settings.connectTimeoutNanos(), TimeUnit.NANOSECONDS);
      id.resolveAddr(null, peer, timeoutMillis(deadline));
      return connection.prepared();
    } catch (IOException e) {
      domain.release();
      return CompletableFuture.failedFuture(e);
    }
  }

  /** Queue pairs currently open on this node, opened or accepted. */
  public int queuePairCount() {
    return queuePairs.size();
  }

  private void cmLoop() {
    try {
      pollEvents();
    } finally {
      synchronized (channelLock) {
        cmThreadDone = true;
        if (!channelWanted) {
          freeChannel(); // close() gave up waiting for this thread and left the channel to it
        }
      }
    }
  }

  private void pollEvents() {
    while (open) {
      try {
        RdmaCmEvent event = ids.next(CM_WAIT_SLICE_MS);
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
      } catch (IOException e) {
        if (open) {
          // The channel failed and will deliver nothing more: connects time out from now on.
          LOG.error("the rdma_cm event channel failed; this node accepts and opens no more queue pairs", e);
        }
        return;
      } catch (RuntimeException e) {
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
      destroyQuietly(id);
      return;
    }
    ProtectionDomain domain = admission.domain(); // this reference passes to the queue pair
    CompletionQueues.Reservation reservation;
    IbvQP qp;
    try {
      reservation = completionQueues.reserve(admission.sizes().completions());
    } catch (IOException e) {
      LOG.warn("refused an RDMA connect request from {}: {}", source, e.getMessage());
      domain.release();
      destroyQuietly(id);
      return;
    }
    try {
      qp = id.createQP(domain.pd(), queuePairAttributes(admission.sizes(), reservation));
    } catch (IOException | RuntimeException e) {
      completionQueues.release(reservation);
      domain.release();
      LOG.warn("refused an RDMA connect request from {}: creating its queue pair failed", source, e);
      destroyQuietly(id);
      return;
    }
    RdmaQueuePair queuePair;
    try {
      queuePair = established(id, qp, String.valueOf(source), admission.sizes(), reservation, domain);
    } catch (IOException e) {
      LOG.warn("refused an RDMA connect request from {}: building its work requests failed", source, e);
      try {
        id.destroyQP();
      } catch (IOException ignored) {
        // the id's destruction below releases what is left
      }
      completionQueues.release(reservation);
      domain.release();
      destroyQuietly(id);
      return;
    }
    try {
      admission.acceptor().accept(queuePair);
      if (!queuePair.isOpen()) {
        return; // closed meanwhile (the node is closing): its id is destroyed, nothing to accept
      }
      RdmaConnParam param = new RdmaConnParam();
      param.setRetry_count((byte) RetryPolicy.RETRY_COUNT);
      param.setRnr_retry_count((byte) RetryPolicy.RNR_RETRY_COUNT);
      RetryPolicy.applyAckTimeout(id);
      id.accept(param);
    } catch (Exception e) {
      LOG.warn("refused an RDMA connect request from {}", source, e);
      queuePair.close();
    }
  }

  private void destroyQuietly(RdmaCmId id) {
    try {
      ids.destroy(id);
    } catch (IOException e) {
      LOG.warn("destroying a refused rdma_cm id failed", e);
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

  /**
   * Takes over the caller's reference to {@code domain}.
   *
   * @throws IOException if the queue pair's work requests cannot be built (the caller then
   *     still owns the id, the queue pair, the reservation and the domain reference)
   */
  RdmaQueuePair established(RdmaCmId id, IbvQP qp, String peer, RdmaQueuePair.Sizes sizes,
      CompletionQueues.Reservation reservation, ProtectionDomain domain) throws IOException {
    RdmaQueuePair queuePair = new RdmaQueuePair(this, id, qp, peer, sizes, reservation, domain);
    queuePairs.add(queuePair);
    routes.put(id, event -> {
      int type = event.getEvent();
      if (ConnectionEvents.endsConnection(type)) {
        queuePair.connectionEnded(ConnectionEvents.name(type));
      }
    });
    return queuePair;
  }

  /**
   * Destroys the id (and its QP) of a connection that did not complete, off the caller's lock,
   * then gives back the connection's domain reference.
   */
  void abandon(RdmaCmId id, boolean hasQueuePair, ProtectionDomain domain) {
    routes.remove(id);
    timer.execute(() -> {
      try {
        if (hasQueuePair) {
          int rc = id.destroyQP();
          if (rc < 0) {
            throw new IOException("destroying the queue pair failed with errno " + -rc);
          }
        }
        domain.release();
        ids.destroy(id);
      } catch (IOException e) {
        LOG.warn("destroying an abandoned connection failed", e);
      }
    });
  }

  /** Destroys an id whose queue pair is gone (or never was). */
  void destroyId(RdmaCmId id) throws IOException {
    ids.destroy(id);
  }

  /** rdma_cm ids this node's event channel tracks (the listener's among them). */
  public int cmIdCount() {
    return ids.size();
  }

  void release(RdmaQueuePair queuePair) {
    queuePairs.remove(queuePair);
    routes.remove(queuePair.cmId());
    try {
      timer.execute(queuePair::destroy);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      queuePair.destroy(); // the node is closing: destroy here rather than never
    }
  }

  /** A new work request slot number (the low bits of its ids, see {@link WorkRequestIds}). */
  long nextSlot() {
    return slots.incrementAndGet() & WorkRequestIds.SLOT_MASK;
  }

  void track(WorkRequest request) {
    pending.put(request.slot(), request);
  }

  void untrack(WorkRequest request) {
    pending.remove(request.slot(), request);
  }

  /**
   * Routes one completion to its slot. A handler that throws fails only the slot's queue pair
   * (its work fails, its peer reconnects); the completion thread goes on with the next one.
   */
  private void completed(long wrId, int status, int byteLength) {
    WorkRequest request = pending.get(WorkRequestIds.slot(wrId));
    if (request == null) {
      return;
    }
    try {
      request.completed(wrId, status, byteLength);
    } catch (RuntimeException e) {
      RdmaQueuePair owner = request.owner();
      LOG.error("handling a completion of the queue pair to {} failed; closing it", owner.peer(), e);
      owner.failWith(new TransportException("handling a completion from " + owner.peer() + " failed: " + e, e));
    }
  }

  private void sweepDeadlines() {
    long now = System.nanoTime();
    for (RdmaQueuePair qp : queuePairs) {
      qp.checkDeadlines(now);
    }
  }

  /**
   * A future whose waiting caller polls this node's completion queues for up to the
   * busy-poll time before it blocks (see {@link PolledFuture}).
   */
  public <T> CompletableFuture<T> newFuture() {
    return settings.busyPollNanos() > 0 ? new PolledFuture<>(completionQueues, settings.busyPollNanos())
        : new CompletableFuture<>();
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


  /** Completion queues opened so far (each has its own thread). */
  public int completionQueueCount() {
    return completionQueues.queueCount();
  }

  /**
   * Closes every queue pair (outstanding work fails with PeerClosedException), stops the
   * threads and frees the device resources. Regions should be closed first: a domain is
   * freed only when its last region is. If the rdma_cm thread does not stop within 5 s (a
   * callback blocks it), the event channel is not freed under it: the thread frees it when
   * it stops.
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
    stopTimer();
    for (Map.Entry<InetSocketAddress, Admission> a : admitted.entrySet()) {
      if (admitted.remove(a.getKey(), a.getValue())) { // a late connect request may take it meanwhile
        a.getValue().domain().release();
      }
    }
    // Queue pairs are destroyed on the timer, which has finished: the queues are free now.
    completionQueues.close();
    if (domains.peerCount() > 0) {
      LOG.warn("RDMA node closed with protection domains of {} peers still referenced", domains.peerCount());
    }
    localDomain.release(); // the node's own reference; regions still registered keep it
    synchronized (channelLock) {
      channelWanted = false;
      if (cmThreadDone) {
        freeChannel();
      } else {
        // It may be inside rdma_get_cm_event or a callback: it frees the channel when it stops.
        LOG.warn("the rdma_cm thread did not stop within 5 s; it frees the event channel when it does");
      }
    }
  }

  /**
   * Stops the timer once the work already due on it (queue pair destructions) has run. The
   * deadlines of connects and the lapses of admissions not due yet would hold the timer for as
   * long as the connect timeout: they run at once, on this thread (a connect still pending fails
   * as abandoned by the closing node, an admission lapses). Waits at most 5 s for the due work
   * and, if it was not done by then, 5 s more for the timer to stop (the rest is left to it).
   */
  private void stopTimer() {
    timer.shutdown();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (dueWorkLeft() && System.nanoTime() - deadline < 0) {
      try {
        Thread.sleep(1);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    if (!dueWorkLeft()) {
      for (Runnable early : timer.shutdownNow()) {
        try {
          early.run();
        } catch (RuntimeException e) {
          LOG.warn("a deadline run early while closing failed", e);
        }
      }
    }
    try {
      if (!timer.awaitTermination(5, TimeUnit.SECONDS)) {
        LOG.warn("the RDMA node's timer did not stop within 5 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Whether the timer runs a task or holds one that is due. */
  private boolean dueWorkLeft() {
    if (timer.getActiveCount() > 0) {
      return true;
    }
    for (Runnable r : timer.getQueue()) {
      if (r instanceof java.util.concurrent.Delayed d && d.getDelay(TimeUnit.NANOSECONDS) <= 0) {
        return true;
      }
    }
    return false;
  }

  /** Whether the node is open (not closing or closed). */
  boolean isOpen() {
    return open;
  }

  /** Destroys the listener's id and the event channel; once, by whichever of close() and the CM thread is last. */
  private void freeChannel() {
    try {
      ids.destroy(listenId);
    } catch (IOException e) {
      LOG.warn("destroying the listener failed", e);
    }
    try {
      int rc = channel.destroyEventChannel();
      if (rc < 0) {
        LOG.warn("destroying the event channel failed with errno {}", -rc);
      }
    } catch (IOException e) {
      LOG.warn("destroying the event channel failed", e);
    }
  }

  /** Whether the event channel is still allocated (it outlives a CM thread that did not stop). */
  boolean eventChannelOpen() {
    return channel.isOpen();
  }
}
