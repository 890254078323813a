package io.sluice.transport.verbs.rc;

import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaConnParam;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportTimeoutException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;

/**
 * A connection whose local address is resolved but which is not connected yet. Its
 * {@link #source()} is the address the peer will see in the connect request: tell the peer
 * over an authenticated channel, have it {@link RdmaNode#admit admit} that source, then
 * {@link #connect()}. Abandon it with {@link #close()}.
 *
 * <p>Thread safety: the event methods run on the node's CM thread; the public methods may
 * be called from any thread. All state is guarded by this.
 */
public final class PreparedConnection implements AutoCloseable {

  private enum State { RESOLVING_ADDRESS, PREPARED, RESOLVING_ROUTE, CONNECTING, DONE }

  private final RdmaNode node;
  private final RdmaCmId id;
  private final InetSocketAddress peer;
  private final RdmaQueuePair.Sizes sizes;
  /** One reference, handed to the queue pair on success and given back otherwise. */
  private final ProtectionDomain domain;
  private final long deadline;
  private final CompletableFuture<PreparedConnection> prepared = new CompletableFuture<>();
  private final CompletableFuture<RdmaQueuePair> connected = new CompletableFuture<>();
  private State state = State.RESOLVING_ADDRESS;
  private InetSocketAddress source;
  private IbvQP qp;
  private CompletionQueues.Reservation reservation;

  PreparedConnection(RdmaNode node, RdmaCmId id, InetSocketAddress peer, RdmaQueuePair.Sizes sizes,
      ProtectionDomain domain, long deadline) {
    this.node = node;
    this.id = id;
    this.peer = peer;
    this.sizes = sizes;
    this.domain = domain;
    this.deadline = deadline;
  }

  CompletableFuture<PreparedConnection> prepared() {
    return prepared;
  }

  /** The local address and port of this connection, as the peer's listener will see it. */
  public synchronized InetSocketAddress source() {
    return source;
  }

  public InetSocketAddress peer() {
    return peer;
  }

  /**
   * Connects to the peer; completes with the queue pair, or exceptionally with a
   * {@link TransportException} if the peer refuses (not admitted, nobody listening), is
   * unreachable, or the connect deadline passes.
   */
  public synchronized CompletableFuture<RdmaQueuePair> connect() {
    if (state != State.PREPARED) {
      connected.completeExceptionally(new IllegalStateException("connect() in state " + state));
      return connected;
    }
    state = State.RESOLVING_ROUTE;
    try {
      id.resolveRoute(node.timeoutMillis(deadline));
    } catch (IOException e) {
      failLocked(new TransportException("resolving the route to " + peer + " failed", e));
    }
    return connected;
  }

  /** Called on the CM thread for every event of this id. */
  synchronized void onEvent(RdmaCmEvent event) {
    int type = event.getEvent();
    try {
      if (state == State.RESOLVING_ADDRESS && type == Events.ADDR_RESOLVED) {
        source = (InetSocketAddress) id.getSource();
        state = State.PREPARED;
        prepared.complete(this);
      } else if (state == State.RESOLVING_ROUTE && type == Events.ROUTE_RESOLVED) {
        createQueuePair();
        RdmaConnParam param = new RdmaConnParam();
        param.setRetry_count((byte) RetryPolicy.RETRY_COUNT);
        param.setRnr_retry_count((byte) RetryPolicy.RNR_RETRY_COUNT);
        RetryPolicy.applyAckTimeout(id);
        state = State.CONNECTING;
        id.connect(param);
      } else if (state == State.CONNECTING && type == Events.ESTABLISHED) {
        RdmaQueuePair queuePair = node.established(id, qp, peer.toString(), sizes, reservation, domain);
        state = State.DONE;
        connected.complete(queuePair);
      } else if (state != State.DONE) {
        failLocked(new TransportException("connecting to " + peer + " failed: " + ConnectionEvents.name(type)));
      }
    } catch (IOException e) {
      failLocked(new TransportException("connecting to " + peer + " failed", e));
    }
  }

  private void createQueuePair() throws IOException {
    if (node.contextFd() != id.getVerbs().getCmd_fd()) {
      throw new IOException(peer + " is reachable only through another RDMA device than the node's");
    }
    reservation = node.reserveCompletions(sizes);
    qp = id.createQP(domain.pd(), RdmaNode.queuePairAttributes(sizes, reservation));
  }

  /** Called by the node's timer at the connect deadline. */
  synchronized void deadlinePassed() {
    if (state != State.DONE && state != State.PREPARED) {
      failLocked(node.isOpen()
          ? new TransportTimeoutException("connecting to " + peer + " did not finish within the connect timeout")
          : new TransportException("connecting to " + peer + " abandoned: the RDMA node closed"));
    }
  }

  /** Abandons the connection unless it completed. */
  @Override
  public synchronized void close() {
    if (state != State.DONE) {
      failLocked(new TransportException("connection to " + peer + " abandoned"));
    }
  }

  private void failLocked(Exception cause) {
    state = State.DONE;
    prepared.completeExceptionally(cause);
    connected.completeExceptionally(cause);
    node.abandon(id, qp != null, domain);
    if (reservation != null) {
      node.returnCompletions(reservation);
      reservation = null;
    }
  }

  /** RDMA CM event numbers (RdmaCmEvent.EventType ordinals). */
  static final class Events {
    static final int ADDR_RESOLVED = RdmaCmEvent.EventType.RDMA_CM_EVENT_ADDR_RESOLVED.ordinal();
    static final int ROUTE_RESOLVED = RdmaCmEvent.EventType.RDMA_CM_EVENT_ROUTE_RESOLVED.ordinal();
    static final int CONNECT_REQUEST = RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_REQUEST.ordinal();
    static final int ESTABLISHED = RdmaCmEvent.EventType.RDMA_CM_EVENT_ESTABLISHED.ordinal();
    static final int DISCONNECTED = RdmaCmEvent.EventType.RDMA_CM_EVENT_DISCONNECTED.ordinal();

    private Events() {}
  }
}
