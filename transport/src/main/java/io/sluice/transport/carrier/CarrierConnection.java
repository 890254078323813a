package io.sluice.transport.carrier;

import io.sluice.transport.Connection;
import io.sluice.transport.MessageTooLargeException;
import io.sluice.transport.NodeAddress;
import io.sluice.transport.PeerClosedException;
import io.sluice.transport.ProtocolException;
import io.sluice.transport.ReadRequest;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.RemoteDescriptor;
import io.sluice.transport.RemoteView;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportTimeoutException;
import io.sluice.transport.UnknownKeyException;
import io.sluice.transport.wire.FrameHeader;
import io.sluice.transport.wire.FrameType;
import io.sluice.transport.wire.Frames;
import io.sluice.transport.wire.RecordLayer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connecting side of a carrier connection. Callers' threads queue READ requests and messages
 * (one gather write per batch) on its {@link SessionSocket}; the transport's selector threads
 * receive the answers (no thread per connection), and READ_RESPONSE bytes go from the socket
 * straight into the destination region (on an encrypted connection, after their tag checks
 * out). A peer reached on a {@link DataPath} is read through its {@link PeerPath} instead.
 *
 * <p>Deadlines: every READ and request carries one; the transport's timer fails it with {@link
 * TransportTimeoutException} when it passes. A response that arrives after its deadline is
 * discarded, so a destination is never written after its future failed. Requests beyond the
 * credit of {@code maxRequestsInFlight} wait here, not at the peer. Thread safe.
 */
public final class CarrierConnection implements Connection {
  private static final Logger LOG = LoggerFactory.getLogger(CarrierConnection.class);

  /** One outstanding operation; {@code dest} is null for messages. */
  private record Pending(CompletableFuture<Object> future, long deadline, RegisteredRegion dest,
      long destOffset, int length) {}

  /**
   * What a correlation id whose deadline passed still expects from the peer: a late answer is
   * read, checked and dropped, never taken for a forgery; READs keep their length.
   */
  private record Abandoned(int length, boolean read) {}

  /** A request waiting for credit. */
  private record Queued(long corr, ByteBuffer message) {}

  private static final Runnable NOTHING = () -> { };

  private final Carrier carrier;
  private final java.nio.channels.SocketChannel channel;
  private final SessionSocket socket;
  private final IoLoop loop;
  /** The READ whose answer is being received, out of {@code pending}; selector thread only. */
  private Pending currentRead;
  private final NodeAddress peer;
  private final long peerNode;
  private final byte[] peerIdentityKey;
  /** Holds the peer's node id for its key in the carrier's {@code PeerIdentities} until this closes. */
  private final io.sluice.transport.crypto.PeerIdentities.Hold peerHold;
  private final boolean encrypted;
  private final AtomicLong nextCorr = new AtomicLong(1);
  private final Map<Long, Pending> pending = new ConcurrentHashMap<>();
  /** Sent and timed out here, not yet answered by the peer; emptied when the connection closes. */
  private final Map<Long, Abandoned> abandoned = new ConcurrentHashMap<>();
  private final ArrayDeque<Queued> waitingForCredit = new ArrayDeque<>();
  /** Requests written to the socket and not yet answered: each holds one credit. */
  private final java.util.Set<Long> requestsOnWire = ConcurrentHashMap.newKeySet();
  private int credits;
  private volatile PeerPath path;
  private volatile String pathName = "tcp";
  private volatile boolean closed;
  private volatile TransportException closeCause;

  /**
   * Takes over an authenticated socket (non-blocking from here on) with the record protection
   * its handshake set up; {@link #start} hands it to {@code loop}. Takes over {@code peerHold},
   * released when the connection closes.
   */
  CarrierConnection(Carrier carrier, java.nio.channels.SocketChannel channel, RecordLayer.Sealer sealer,
      RecordLayer.Opener opener, IoLoop loop, NodeAddress peer, long peerNode, byte[] peerIdentityKey,
      io.sluice.transport.crypto.PeerIdentities.Hold peerHold) throws IOException {
    this.carrier = carrier;
    this.channel = channel;
    this.loop = loop;
    channel.configureBlocking(false);
    this.socket = new SessionSocket(channel, loop, carrier.settings().ioTimeoutNanos(), true, new Receiver());
    socket.protect(sealer, opener);
    this.encrypted = sealer.encrypted();
    this.peer = peer;
    this.peerNode = peerNode;
    this.peerIdentityKey = peerIdentityKey.clone();
    this.peerHold = peerHold;
    this.credits = carrier.settings().maxRequestsInFlight();
  }

  /** Hands the socket to its selector thread, which receives the answers from now on. */
  void start() {
    loop.register(channel, socket);
  }

  /**
   * Sends READs through {@code peerPath} (named {@code name} in {@link #dataPath()}) instead of
   * READ frames; called once, before the connection is handed out. The connection sweeps the path
   * on its timer and closes it when it closes.
   */
  public void usePath(String name, PeerPath peerPath) {
    this.pathName = name;
    this.path = peerPath;
  }

  @Override
  public NodeAddress peer() {
    return peer;
  }

  @Override
  public long peerNode() {
    return peerNode;
  }

  @Override
  public byte[] peerIdentityKey() {
    return peerIdentityKey.clone();
  }

  @Override
  public String dataPath() {
    return pathName;
  }

  @Override
  public String dataPath(RemoteDescriptor remote) {
    PeerPath memory = path;
    return memory == null || memory.reaches(remote.key()) ? pathName : "tcp";
  }

  @Override
  public boolean encrypted() {
    return encrypted;
  }

  @Override
  public boolean isOpen() {
    return !closed;
  }

  /**
   * Refuses a READ of a region another node owns: the peer proved its own node id in the handshake,
   * and a descriptor names its owner, so a READ of node X's region sent to node Y (a redirected
   * connection, a peer holding the secret under its own key) would hand back Y's bytes as X's.
   */
  private Optional<UnknownKeyException> notThePeers(RemoteDescriptor remote) {
    if (remote.node() == peerNode) {
      return Optional.empty();
    }
    return Optional.of(new UnknownKeyException(String.format(
        "READ of a region of node %016x over the connection to node %016x (%s): refused", remote.node(), peerNode,
        peer())));
  }

  @Override
  public CompletableFuture<Optional<RemoteView>> view(RemoteDescriptor remote, long remoteOffset, long length) {
    PeerPath memory = path;
    if (closed) {
      return CompletableFuture.failedFuture(closedException());
    }
    Optional<UnknownKeyException> foreign = notThePeers(remote);
    if (foreign.isPresent()) {
      return CompletableFuture.failedFuture(foreign.get());
    }
    if (memory == null) {
      return CompletableFuture.completedFuture(Optional.empty());
    }
    return memory.view(remote, remoteOffset, length).thenApply(v -> {
      v.ifPresent(x -> carrier.metrics().viewTaken(length));
      return v;
    });
  }

  @Override
  public List<CompletableFuture<Void>> readBatch(List<ReadRequest> requests) {
    return carrier.metrics().meterReads(this, requests, unmeteredReads(requests));
  }

  private List<CompletableFuture<Void>> unmeteredReads(List<ReadRequest> requests) {
    List<CompletableFuture<Void>> results = new ArrayList<>(requests.size());
    PeerPath memory = path;
    if (memory != null) {
      for (ReadRequest r : requests) {
        Optional<UnknownKeyException> foreign = notThePeers(r.remote());
        results.add(closed ? CompletableFuture.failedFuture(closedException())
            : foreign.isPresent() ? CompletableFuture.failedFuture(foreign.get()) : memory.read(r));
      }
      return results;
    }
    return readOverCarrier(requests);
  }

  /**
   * READs through this connection's own READ frames even when it has a data path: for regions
   * the path cannot reach (the peer keeps them out of it).
   */
  public List<CompletableFuture<Void>> readOverCarrier(List<ReadRequest> requests) {
    List<CompletableFuture<Void>> results = new ArrayList<>(requests.size());
    List<SessionSocket.Frame> frames = new ArrayList<>(requests.size());
    long deadline = System.nanoTime() + carrier.settings().ioTimeoutNanos();
    List<Long> sent = new ArrayList<>(requests.size());
    for (ReadRequest r : requests) {
      CompletableFuture<Object> f = new CompletableFuture<>();
      results.add(f.thenApply(x -> null));
      Optional<UnknownKeyException> foreign = notThePeers(r.remote());
      if (foreign.isPresent()) {
        f.completeExceptionally(foreign.get());
        continue;
      }
      if (!r.local().isOpen() || !(r.local() instanceof io.sluice.transport.region.Region local) || !local.tryRetain()) {
        f.completeExceptionally(new IllegalArgumentException("destination is not a live region of this transport"));
        continue;
      }
      long corr = nextCorr.getAndIncrement();
      pending.put(corr, new Pending(f, deadline, r.local(), r.localOffset(), r.length()));
      f.whenComplete((x, e) -> r.local().release());
      ByteBuffer payload = ByteBuffer.allocate(Frames.ReadRequestFrame.LENGTH);
      new Frames.ReadRequestFrame(r.remote().key(), r.remoteOffset(), r.length()).encode(payload);
      frames.add(new SessionSocket.Frame(FrameType.READ_REQUEST, corr, payload.flip()));
      sent.add(corr);
    }
    if (closed) {
      failAll(sent, closedException());
      return results;
    }
    if (!sent.isEmpty()) {
      socket.sendAll(frames);
    }
    return results;
  }

  @Override
  public CompletableFuture<ByteBuffer> request(ByteBuffer message) {
    int max = carrier.settings().maxMessageBytes();
    if (message.remaining() > max) {
      return CompletableFuture.failedFuture(new MessageTooLargeException(
          "request of " + message.remaining() + " bytes exceeds " + io.sluice.transport.TransportOption.MAX_MESSAGE_BYTES.key() + "=" + max));
    }
    ByteBuffer copy = ByteBuffer.allocate(message.remaining()).put(message.duplicate()).flip();
    CompletableFuture<Object> f = new CompletableFuture<>();
    long corr = expectReply(f);
    if (!closed) {
      boolean sendNow;
      synchronized (waitingForCredit) {
        sendNow = credits > 0;
        if (sendNow) {
          credits--;
        } else {
          waitingForCredit.add(new Queued(corr, copy));
        }
      }
      if (sendNow) {
        sendRequest(corr, copy);
      }
    }
    return carrier.metrics().meterRequest(f.thenApply(ByteBuffer.class::cast));
  }

  /**
   * Registers {@code f} for the reply to a new correlation id, with the I/O deadline; fails it at
   * once if the connection is already closed. @return the correlation id
   */
  private long expectReply(CompletableFuture<Object> f) {
    long corr = nextCorr.getAndIncrement();
    pending.put(corr, new Pending(f, System.nanoTime() + carrier.settings().ioTimeoutNanos(), null, 0, 0));
    if (closed) {
      failAll(List.of(corr), closedException());
    }
    return corr;
  }

  private void sendRequest(long corr, ByteBuffer message) {
    requestsOnWire.add(corr);
    socket.send(FrameType.REQUEST, corr, NOTHING, message);
  }

  private void answered(long corr) {
    if (requestsOnWire.remove(corr)) {
      returnCredit();
    }
  }

  /** A response (or error) to a request arrived: its credit goes to the next waiting request. */
  private void returnCredit() {
    Queued next;
    synchronized (waitingForCredit) {
      next = waitingForCredit.poll();
      while (next != null && !pending.containsKey(next.corr())) {
        next = waitingForCredit.poll(); // timed out while waiting
      }
      if (next == null) {
        credits++;
        return;
      }
    }
    sendRequest(next.corr(), next.message());
  }

  private boolean admit(FrameHeader h) {
    return true;
  }

  private ByteBuffer sink(FrameHeader h) throws ProtocolException {
    if (h.type() != FrameType.READ_RESPONSE) {
      return null;
    }
    Pending p = pending.remove(h.correlationId());
    if (p == null) {
      abandoned.remove(h.correlationId()); // its deadline passed; maxPayload checked the length
      return SessionSocket.DISCARD;
    }
    currentRead = p;
    if (p.dest() == null || h.payloadLength() != p.length()) {
      throw new ProtocolException("READ_RESPONSE of " + h.payloadLength() + " bytes for a request of " + p.length());
    }
    ByteBuffer dst = p.dest().buffer();
    dst.limit((int) (p.destOffset() + p.length())).position((int) p.destOffset());
    return dst;
  }

  private void frame(FrameHeader h, ByteBuffer payload) throws IOException {
    switch (h.type()) {
      case READ_RESPONSE -> {
        Pending p = currentRead;
        currentRead = null;
        p.future().complete(null);
      }
      case RESPONSE -> {
        abandoned.remove(h.correlationId());
        Pending p = pending.remove(h.correlationId());
        if (p != null) {
          p.future().complete(payload);
        }
        answered(h.correlationId());
      }
      case ERROR -> {
        Frames.ErrorFrame e = Frames.ErrorFrame.decode(payload);
        abandoned.remove(h.correlationId());
        Pending p = pending.remove(h.correlationId());
        answered(h.correlationId());
        if (p != null) {
          p.future().completeExceptionally(e.code().toException(e.message()));
        } else if (h.correlationId() == 0) {
          throw e.code().toException(e.message());
        }
      }
      case CONTROL_REPLY -> {
        abandoned.remove(h.correlationId());
        Pending p = pending.remove(h.correlationId());
        if (p != null) {
          p.future().complete(payload);
        }
      }
      default -> throw new ProtocolException("unexpected " + h.type() + " from a server");
    }
  }

  private void violated(ProtocolException e) {
    if (!closed) {
      LOG.warn("Closing connection to {}: {}", peer, e.getMessage());
    }
  }

  private void closed(IOException cause) {
    if (!closed) {
      fail(cause instanceof ProtocolException || cause instanceof TransportTimeoutException
          ? (TransportException) cause
          : new PeerClosedException("connection to " + peer + " closed: " + cause.getMessage(), cause));
    }
    // The READ being received is failed on the selector thread, after it stopped writing into
    // the destination and zeroed what landed there (the socket's PayloadReader.abandon, queued
    // first): a destination is never written after its future failed, nor left holding a part.
    if (loop.inLoop()) {
      failCurrentRead();
    } else {
      loop.execute(this::failCurrentRead);
    }
  }

  private void failCurrentRead() {
    Pending p = currentRead;
    currentRead = null;
    if (p != null) {
      p.future().completeExceptionally(closedException());
    }
  }

  /**
   * The largest payload the server may send in this frame, decided from its header alone, before
   * anything is allocated or read for it: an answer must name a correlation id this side waits
   * on (or gave up on at its deadline) and be of that operation's kind; a READ_RESPONSE carries
   * exactly the length its READ asked for; messages are bounded by {@code maxMessageBytes},
   * control replies and errors by the control bound.
   *
   * @throws ProtocolException for a frame a server never sends, or an answer nothing waits on
   */
  private long maxPayload(FrameHeader h) throws ProtocolException {
    FrameType type = h.type();
    long corr = h.correlationId();
    if (type == FrameType.ERROR && corr == 0) {
      return Frames.MAX_CONTROL_PAYLOAD; // about the connection, not one operation
    }
    if (type != FrameType.READ_RESPONSE && type != FrameType.RESPONSE && type != FrameType.CONTROL_REPLY
        && type != FrameType.ERROR) {
      throw new ProtocolException("unexpected " + type + " from a server (" + h.payloadLength() + " bytes announced)");
    }
    // A timed-out operation enters abandoned before it leaves pending, so one of them holds it.
    Pending p = pending.get(corr);
    Abandoned a = p != null ? null : abandoned.get(corr);
    if (p == null && a == null) {
      throw new ProtocolException(type + " of " + h.payloadLength() + " bytes for correlation id " + corr
          + " that nothing waits on");
    }
    boolean read = p != null ? p.dest() != null : a.read();
    int readLength = p != null ? p.length() : a.length();
    return switch (type) {
      case READ_RESPONSE -> {
        if (!read) {
          throw new ProtocolException("READ_RESPONSE of " + h.payloadLength() + " bytes answers a message, correlation id " + corr);
        }
        yield readLength;
      }
      case RESPONSE, CONTROL_REPLY -> {
        if (read) {
          throw new ProtocolException(type + " of " + h.payloadLength() + " bytes answers a READ, correlation id " + corr);
        }
        yield type == FrameType.RESPONSE ? carrier.settings().maxMessageBytes() : Frames.MAX_CONTROL_PAYLOAD;
      }
      default -> Frames.MAX_CONTROL_PAYLOAD;
    };
  }

  /**
   * Sends a request to the peer's control service {@code service} and completes with its reply,
   * or exceptionally with the peer's error (typed as its ERROR code says; {@link
   * io.sluice.transport.TransportUnavailableException} when the peer serves no such service),
   * {@link PeerClosedException} or a timeout after the I/O deadline.
   *
   * @throws IllegalArgumentException for a service id outside 1..255 or a request of more than
   *     {@link Frames#MAX_CONTROL_PAYLOAD} bytes
   */
  public CompletableFuture<ByteBuffer> control(int service, ByteBuffer request) {
    ByteBuffer payload = new Frames.Control(service, request).encode();
    CompletableFuture<Object> f = new CompletableFuture<>();
    long corr = expectReply(f);
    if (!closed) {
      socket.send(FrameType.CONTROL, corr, NOTHING, payload);
    }
    return f.thenApply(ByteBuffer.class::cast);
  }

  boolean holdsSealBuffer() {
    return socket.holdsSealBuffer();
  }

  /** Called by the transport's timer. */
  void checkDeadlines(long now) {
    if (socket.checkStalled(now)) {
      return; // closing failed everything
    }
    PeerPath memory = path;
    if (memory != null) {
      memory.sweep();
    }
    for (Map.Entry<Long, Pending> e : pending.entrySet()) {
      Pending p = e.getValue();
      if (now - p.deadline() <= 0) {
        continue;
      }
      abandoned.put(e.getKey(), new Abandoned(p.length(), p.dest() != null));
      if (!pending.remove(e.getKey(), p)) {
        abandoned.remove(e.getKey()); // its answer is being received right now
      } else {
        p.future().completeExceptionally(new TransportTimeoutException(
            (p.dest() != null ? "READ" : "request") + " to " + peer + " missed its deadline of "
                + carrier.settings().ioTimeoutNanos() / 1_000_000 + " ms"));
        if (p.dest() == null && forgetQueued(e.getKey())) {
          abandoned.remove(e.getKey()); // never sent, so never answered
        }
      }
    }
  }

  /**
   * A request that timed out while waiting for credit leaves the queue; one that was sent keeps
   * its credit until the peer answers, since the peer still counts it.
   *
   * @return true if it was still waiting, never sent
   */
  private boolean forgetQueued(long corr) {
    synchronized (waitingForCredit) {
      return waitingForCredit.removeIf(q -> q.corr() == corr);
    }
  }

  Optional<TransportException> closeCause() {
    return Optional.ofNullable(closeCause);
  }

  private TransportException closedException() {
    TransportException cause = closeCause;
    return cause != null && !(cause instanceof PeerClosedException)
        ? new PeerClosedException("connection to " + peer + " is closed: " + cause.getMessage(), cause)
        : new PeerClosedException("connection to " + peer + " is closed");
  }

  private void failAll(List<Long> corrs, TransportException e) {
    for (long c : corrs) {
      Pending p = pending.remove(c);
      if (p != null) {
        p.future().completeExceptionally(e);
      }
    }
  }

  private void fail(TransportException cause) {
    if (closeCause == null) {
      closeCause = cause;
    }
    closed = true;
    socket.close(cause);
    TransportException e = cause instanceof PeerClosedException ? cause : closedException();
    for (Long c : new ArrayList<>(pending.keySet())) {
      Pending p = pending.remove(c);
      if (p != null) {
        p.future().completeExceptionally(e);
      }
    }
    synchronized (waitingForCredit) {
      waitingForCredit.clear();
    }
    abandoned.clear();
    PeerPath memory = path;
    if (memory != null) {
      memory.close();
    }
    peerHold.close();
    carrier.connectionClosed(this);
  }

  @Override
  public void close() {
    if (!closed) {
      fail(new PeerClosedException("connection to " + peer + " closed locally"));
    }
  }

  @Override
  public String toString() {
    return "CarrierConnection[" + peer + ", " + dataPath() + (closed ? ", closed" : "") + "]";
  }

  /** The frames of this connection's socket, on its selector thread. */
  private final class Receiver implements SessionSocket.Receiver {
    @Override
    public long maxPayload(FrameHeader h) throws ProtocolException {
      return CarrierConnection.this.maxPayload(h);
    }

    @Override
    public boolean admit(FrameHeader h) {
      return CarrierConnection.this.admit(h);
    }

    @Override
    public ByteBuffer sink(FrameHeader h) throws ProtocolException {
      return CarrierConnection.this.sink(h);
    }

    @Override
    public void frame(FrameHeader h, ByteBuffer payload) throws IOException {
      CarrierConnection.this.frame(h, payload);
    }

    @Override
    public void violated(ProtocolException e) {
      CarrierConnection.this.violated(e);
    }

    @Override
    public void closed(IOException cause) {
      CarrierConnection.this.closed(cause);
    }
  }
}
