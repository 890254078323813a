package io.sluice.transport.carrier;

import io.sluice.transport.AuthenticationFailedException;
import io.sluice.transport.MessageTooLargeException;
import io.sluice.transport.PeerClosedException;
import io.sluice.transport.ProtocolException;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportTimeoutException;
import io.sluice.transport.TransportUnavailableException;
import io.sluice.transport.UnknownKeyException;
import io.sluice.transport.crypto.NodeIdentity;
import io.sluice.transport.crypto.PeerIdentities;
import io.sluice.transport.crypto.SessionKeys;
import io.sluice.transport.handshake.Handshake;
import io.sluice.transport.metrics.TransportMetrics;
import io.sluice.transport.wire.ErrorCode;
import io.sluice.transport.wire.FrameHeader;
import io.sluice.transport.wire.FrameType;
import io.sluice.transport.wire.Frames;
import io.sluice.transport.wire.RecordLayer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The accepting side of one connection: authenticates the peer, then serves its READs from the
 * carrier's {@link ReadService} (one gather write straight from the memory it names, or from
 * the sealed copy on an encrypted connection), hands its requests to the handler pool and its
 * control requests to their {@link ControlService}. A peer that breaks the protocol, fails a
 * frame's authentication or exceeds its request credit is disconnected with one log line;
 * nothing it sends can affect another session.
 *
 * <p>Owned by its {@link Carrier}. Frames are handled on the {@link IoLoop} thread that
 * owns the socket, and so is every change of the handshake's state; the handshake's X25519
 * agreement and signatures are computed on the carrier's proof threads, which hand the outcome back to the loop
 * thread. Handler answers are sent from the handler threads through {@link SessionSocket#send},
 * which is thread safe.
 */
final class ServerSession implements SessionSocket.Receiver {
  private static final Logger LOG = LoggerFactory.getLogger(ServerSession.class);
  private static final Runnable NOTHING = () -> { };

  /**
   * GREETING: HELLO arrived; this side's ephemeral key and the connection's keys are being made.
   * PROVING: the client proved the secret; its signature is being checked and ours made.
   */
  private enum Phase { HELLO, GREETING, AUTH, PROVING, OPEN }

  private final Carrier carrier;
  private final SessionSocket socket;
  private final IoLoop loop;
  private final String remote;
  private final InetAddress remoteAddress;
  private final long authDeadline;
  /** Control requests of a service that {@link ControlService#mayBlock} a peer may have running at once. */
  static final int MAX_CONTROLS_IN_FLIGHT = 4;
  private final AtomicInteger requestsInFlight = new AtomicInteger();
  /** Control requests admitted and not yet answered; beyond {@link #MAX_CONTROLS_IN_FLIGHT} reading pauses. */
  private final AtomicInteger controlsInFlight = new AtomicInteger();
  /** Bytes of requests read and not yet answered; when a request does not fit, reading pauses. */
  private final AtomicInteger requestBytesFree;
  /**
   * Shared request bytes ({@link Carrier#takeRequestBytes}) taken for admitted requests not yet
   * handed to a handler; returned by the handler's answer, or by the close for those never run.
   */
  private final java.util.concurrent.atomic.AtomicLong admittedBytes = new java.util.concurrent.atomic.AtomicLong();
  /**
   * Whether reading paused because this session's request waits its turn for the carrier's
   * shared request memory (not for its own share): the peer is not stalling then.
   */
  private volatile boolean waitingItsTurn;
  private Phase phase = Phase.HELLO;
  private volatile boolean authenticated;
  /** Counted among the carrier's authenticated sessions (set by {@link Carrier#admitAuthenticated}, under its lock). */
  boolean admitted;
  private Handshake.Server handshake;
  private long peerNode;
  /**
   * Holds the client's node id for the key it proved, from the end of the handshake until the
   * session closes: while it is open, no other key with that id is admitted. {@link #RELEASED}
   * once the session closed, which may happen on any thread.
   */
  private final java.util.concurrent.atomic.AtomicReference<PeerIdentities.Hold> peerHold =
      new java.util.concurrent.atomic.AtomicReference<>();
  private static final PeerIdentities.Hold RELEASED = () -> { };

  /**
   * The timer's check of the handshake deadline while it is pending, {@link #WATCH_DONE} once the
   * session authenticated or closed (a check handed over after that is cancelled at once).
   */
  private final java.util.concurrent.atomic.AtomicReference<Object> handshakeWatch =
      new java.util.concurrent.atomic.AtomicReference<>();
  private static final Object WATCH_DONE = new Object();

  ServerSession(Carrier carrier, SocketChannel channel, IoLoop loop, InetSocketAddress remoteSocket) {
    this.carrier = carrier;
    this.remote = String.valueOf(remoteSocket);
    this.remoteAddress = remoteSocket.getAddress();
    this.authDeadline = System.nanoTime() + carrier.settings().handshakeTimeoutNanos();
    this.requestBytesFree = new AtomicInteger(requestByteBudget(carrier.settings()));
    this.loop = loop;
    this.socket = new SessionSocket(channel, loop, carrier.settings().ioTimeoutNanos(), false, this);
  }

  /** Four maximal messages, so one peer's requests cannot pin more than that in this process. */
  static int requestByteBudget(Settings s) {
    return (int) Math.min(Integer.MAX_VALUE, 4L * s.maxMessageBytes());
  }

  SessionSocket socket() {
    return socket;
  }

  InetAddress remoteAddress() {
    return remoteAddress;
  }

  boolean isAuthenticated() {
    return authenticated;
  }

  /** Whether a request or control request of the peer is being served, or one waits its turn for memory. */
  boolean busy() {
    return requestsInFlight.get() > 0 || controlsInFlight.get() > 0 || waitingItsTurn;
  }

  @Override
  public boolean waitsItsTurn() {
    return waitingItsTurn;
  }

  @Override
  public long maxPayload(FrameHeader h) {
    if (phase != Phase.OPEN) {
      return Frames.MAX_CONTROL_PAYLOAD;
    }
    return switch (h.type()) {
      case REQUEST -> carrier.settings().maxMessageBytes();
      case CONTROL -> Frames.Control.HEADER + Frames.MAX_CONTROL_PAYLOAD;
      default -> Frames.MAX_CONTROL_PAYLOAD;
    };
  }

  @Override
  public boolean admit(FrameHeader h) throws IOException {
    if (phase == Phase.OPEN && h.type() == FrameType.CONTROL) {
      // Answers of blocking services return the slot; resumes then, the timer bounds the wait.
      if (controlsInFlight.get() >= MAX_CONTROLS_IN_FLIGHT) {
        return false;
      }
      controlsInFlight.incrementAndGet();
      return true;
    }
    if (phase != Phase.OPEN || h.type() != FrameType.REQUEST) {
      return true;
    }
    int size = h.payloadLength();
    while (true) {
      int free = requestBytesFree.get();
      if (free < size) {
        // Its own share is held by its own requests: resumes when an answer returns some; the
        // timer bounds the wait.
        waitingItsTurn = false;
        return false;
      }
      if (requestBytesFree.compareAndSet(free, free - size)) {
        break;
      }
    }
    // And the memory every peer's requests share: one that finds it short waits its turn in line.
    if (!carrier.takeRequestBytes(this, size)) {
      requestBytesFree.addAndGet(size);
      waitingItsTurn = true;
      return false;
    }
    waitingItsTurn = false;
    admittedBytes.addAndGet(size);
    int limit = carrier.settings().maxRequestsInFlight();
    if (requestsInFlight.incrementAndGet() > limit) {
      requestBytesFree.addAndGet(size);
      if (claimAdmitted(size)) {
        carrier.returnRequestBytes(size);
      }
      throw new ProtocolException("peer exceeded its credit of " + limit + " requests in flight");
    }
    return true;
  }

  @Override
  public void frame(FrameHeader h, ByteBuffer payload) throws IOException {
    switch (phase) {
      case HELLO -> hello(h, payload);
      case AUTH -> auth(h, payload);
      case GREETING -> throw new ProtocolException(h.type() + " before CHALLENGE");
      case PROVING -> throw new ProtocolException(h.type() + " before AUTH_OK");
      case OPEN -> dispatch(h, payload);
    }
  }

  private void hello(FrameHeader h, ByteBuffer payload) throws IOException {
    if (h.type() != FrameType.HELLO) {
      throw new ProtocolException("expected HELLO, got " + h.type());
    }
    Frames.Hello hello = Frames.Hello.decode(payload);
    try {
      NodeIdentity.checkClaim("client", hello.node(), hello.identityKey());
    } catch (AuthenticationFailedException e) {
      sendError(0, ErrorCode.AUTHENTICATION_FAILED, e.getMessage());
      throw e;
    }
    carrier.sessionGreeted(this);
    // This side's ephemeral key and the X25519 agreement cost two scalar multiplications: off
    // this selector thread, like the signatures, on the carrier's bounded proof threads.
    phase = Phase.GREETING;
    carrier.runProofWork(() -> {
      if (!socket.isOpen()) {
        return;
      }
      Handshake.Server server;
      try {
        server = carrier.handshake().server(carrier.identity(), ownFlags(), hello);
      } catch (AuthenticationFailedException e) {
        loop.execute(() -> refuse(e));
        return;
      } catch (RuntimeException e) {
        loop.execute(() -> socket.brokeDown(e));
        return;
      }
      loop.execute(() -> challenge(server));
    }, () -> socket.close(new PeerClosedException("transport is closed")));
  }

  /** Sends CHALLENGE. On the loop thread. */
  private void challenge(Handshake.Server server) {
    if (!socket.isOpen()) {
      return;
    }
    handshake = server;
    phase = Phase.AUTH;
    socket.send(FrameType.CHALLENGE, 0, NOTHING, server.challenge());
  }

  private int ownFlags() {
    return carrier.settings().encryption() ? Handshake.FLAG_ENCRYPT : 0;
  }

  private void auth(FrameHeader h, ByteBuffer payload) throws IOException {
    if (h.type() != FrameType.AUTH) {
      throw new ProtocolException("expected AUTH, got " + h.type());
    }
    Frames.Auth auth = Frames.Auth.decode(payload);
    Handshake.Server server = handshake;
    try {
      server.checkFinished(auth);
    } catch (AuthenticationFailedException e) {
      sendError(0, ErrorCode.AUTHENTICATION_FAILED, "authentication failed");
      throw e;
    }
    // The client holds the secret; now it must hold the private key of the node id it claimed.
    // Checking its signature and making ours take a millisecond or more, so they run off this
    // selector thread, which serves other connections meanwhile; the outcome comes back to it.
    // The handshake deadline still runs.
    phase = Phase.PROVING;
    carrier.runProofWork(() -> {
      if (!socket.isOpen()) {
        return; // the client left, or the deadline passed, while the work waited its turn
      }
      ByteBuffer authOk;
      try {
        authOk = server.authOk(auth);
      } catch (AuthenticationFailedException e) {
        loop.execute(() -> refuse(e));
        return;
      } catch (RuntimeException e) {
        loop.execute(() -> socket.brokeDown(e));
        return;
      }
      loop.execute(() -> open(server, authOk));
    }, () -> socket.close(new PeerClosedException("transport is closed")));
  }

  /** The client's key or signature failed: tell it why and close. On the loop thread. */
  private void refuse(AuthenticationFailedException e) {
    sendError(0, ErrorCode.AUTHENTICATION_FAILED, e.getMessage());
    socket.close(e);
  }

  /**
   * The client proved its node id: protect the connection and send our signature in AUTH_OK, its
   * first protected frame. On the loop thread.
   */
  private void open(Handshake.Server server, ByteBuffer authOk) {
    if (!socket.isOpen()) {
      return; // closed meanwhile: the handshake deadline, an eviction or the transport's close
    }
    PeerIdentities.Hold hold;
    try {
      hold = carrier.peers().prove(server.clientNode(), server.clientIdentityKey());
    } catch (AuthenticationFailedException e) {
      refuse(e);
      return;
    }
    if (!carrier.admitAuthenticated(this)) {
      hold.close();
      sendError(0, ErrorCode.UNAVAILABLE, "this endpoint holds " + carrier.settings().maxConnections()
          + " authenticated connections, none idle for long enough to make room");
      socket.close(new TransportUnavailableException("refused at the connection bound"));
      return;
    }
    if (!peerHold.compareAndSet(null, hold)) {
      hold.close(); // the session closed meanwhile
    }
    SessionKeys keys = server.keys().sessionKeys();
    socket.protect(RecordLayer.serverSealer(keys, carrier.engine()), RecordLayer.serverOpener(keys, carrier.engine()));
    peerNode = server.clientNode();
    phase = Phase.OPEN;
    authenticated = true;
    carrier.sessionAuthenticated(this);
    socket.send(FrameType.AUTH_OK, 0, NOTHING, authOk);
  }

  private void dispatch(FrameHeader h, ByteBuffer payload) throws IOException {
    switch (h.type()) {
      case READ_REQUEST -> serveRead(h.correlationId(), Frames.ReadRequestFrame.decode(payload));
      case REQUEST -> runRequest(h.correlationId(), payload);
      case CONTROL -> serveControl(h.correlationId(), Frames.Control.decode(payload));
      default -> throw new ProtocolException("unexpected " + h.type() + " from a client");
    }
  }

  private void serveRead(long corr, Frames.ReadRequestFrame req) {
    ReadService.Bytes bytes;
    try {
      var reads = carrier.reads();
      if (reads.isEmpty()) {
        throw new UnknownKeyException("this endpoint serves no READ frames; its regions are read another way");
      }
      bytes = reads.get().read(peerNode, req.key(), req.offset(), req.length());
    } catch (TransportException e) {
      sendError(corr, ErrorCode.of(e), e.getMessage());
      return;
    }
    // The socket runs the release once the bytes are on the wire (or sealed into a copy), or
    // when the connection closes first.
    carrier.metrics().readServed(bytes.data().remaining());
    socket.send(FrameType.READ_RESPONSE, corr, bytes.written(), bytes.data());
  }

  private void serveControl(long corr, Frames.Control request) {
    var service = carrier.services().get(request.service());
    if (service.isEmpty()) {
      sendError(corr, ErrorCode.UNAVAILABLE, "this endpoint serves no control service " + request.service());
      controlDone();
      return;
    }
    if (!service.get().mayBlock()) {
      answerControl(corr, request.service(), service.get(), request.request());
      controlDone();
      return;
    }
    // The request's bytes belong to the read buffer: the handler thread gets its own copy.
    ByteBuffer copy = ByteBuffer.allocate(request.request().remaining()).put(request.request()).flip();
    carrier.runSetup(() -> answerControl(corr, request.service(), service.get(), copy))
        .whenComplete((ok, error) -> {
          if (error != null) {
            sendError(corr, ErrorCode.UNAVAILABLE, String.valueOf(error.getCause() != null ? error.getCause() : error));
          }
          controlDone();
        });
  }

  private void controlDone() {
    controlsInFlight.decrementAndGet();
    socket.resumeReading();
  }

  private void answerControl(long corr, int serviceId, ControlService service, ByteBuffer request) {
    ByteBuffer reply;
    try {
      reply = service.serve(peerNode, remoteAddress, request);
    } catch (TransportException e) {
      sendError(corr, ErrorCode.of(e), e.getMessage());
      return;
    } catch (RuntimeException e) {
      LOG.warn("Control service {} failed for {}", serviceId, remote, e);
      sendError(corr, ErrorCode.PROTOCOL, "control service " + serviceId + " failed: " + e);
      return;
    }
    if (reply.remaining() > Frames.MAX_CONTROL_PAYLOAD) {
      sendError(corr, ErrorCode.PROTOCOL, "control reply of " + reply.remaining() + " bytes exceeds "
          + Frames.MAX_CONTROL_PAYLOAD);
      return;
    }
    socket.send(FrameType.CONTROL_REPLY, corr, NOTHING, reply);
  }

  /**
   * Takes over {@code n} of the shared request bytes this session's admitted requests hold, unless
   * the session's close already returned them.
   */
  private boolean claimAdmitted(int n) {
    while (true) {
      long held = admittedBytes.get();
      if (held < n) {
        return false;
      }
      if (admittedBytes.compareAndSet(held, held - n)) {
        return true;
      }
    }
  }

  /** The credit and request memory were taken in {@link #admit}. */
  private void runRequest(long corr, ByteBuffer message) {
    int size = message.remaining();
    boolean sharedBytes = claimAdmitted(size);
    CompletableFuture<ByteBuffer> reply;
    carrier.metrics().requestServed();
    try {
      reply = carrier.runHandler(peerNode, remoteAddress, message);
    } catch (RuntimeException e) {
      reply = CompletableFuture.failedFuture(e);
    }
    reply.whenComplete((response, error) -> {
      // The credit returns before the answer is written: the peer may send its next request
      // as soon as it reads this answer, and must find the credit free by then.
      requestsInFlight.decrementAndGet();
      requestBytesFree.addAndGet(size);
      if (sharedBytes) {
        carrier.returnRequestBytes(size);
      }
      socket.resumeReading();
      if (error != null) {
        Frames.ErrorFrame failure = Frames.ErrorFrame.ofHandlerFailure(error);
        sendError(corr, failure.code(), failure.message());
      } else if (response == null) {
        sendError(corr, ErrorCode.HANDLER_FAILED, "handler returned no response");
      } else if (response.remaining() > carrier.settings().maxMessageBytes()) {
        sendError(corr, ErrorCode.MESSAGE_TOO_LARGE,
            new MessageTooLargeException("response of " + response.remaining() + " bytes exceeds "
                + carrier.settings().maxMessageBytes()).getMessage());
      } else {
        socket.send(FrameType.RESPONSE, corr, NOTHING, response);
      }
    });
  }

  private void sendError(long corr, ErrorCode code, String message) {
    socket.send(FrameType.ERROR, corr, NOTHING, new Frames.ErrorFrame(code, message).encode());
  }

  @Override
  public void closed(IOException cause) {
    // At most a line a second however many peers fail: a flood must not become a log flood.
    LogLimiter limit = carrier.sessionEndLog();
    // One classification serves the metric and the log line.
    TransportMetrics.Reason reason = cause instanceof Carrier.DroppedToMakeRoom ? TransportMetrics.Reason.DROPPED
        : TransportMetrics.Reason.of(cause, carrier.isClosing());
    carrier.metrics().sessionEnded(reason, authenticated);
    switch (reason) {
      case AUTHENTICATION -> limit.log(n -> LOG.warn("Rejected connection from {}: {}{}", remote, cause.getMessage(),
          Carrier.leftOut(n)));
      case PROTOCOL -> limit.log(n -> LOG.warn("Closing connection from {}: protocol violation: {}{}", remote,
          cause.getMessage(), Carrier.leftOut(n)));
      case TIMEOUT -> limit.log(n -> LOG.warn("Closing connection from {}: {}{}", remote, cause.getMessage(),
          Carrier.leftOut(n)));
      case ERROR, REFUSED -> limit.log(n -> LOG.warn("Closing connection from {}: {}{}", remote, cause.toString(),
          Carrier.leftOut(n)));
      case DROPPED, LOCAL, PEER_CLOSED -> LOG.debug("session {} ended: {}", remote, cause.getMessage());
    }
    long unrun = admittedBytes.getAndSet(0);
    if (unrun > 0) {
      carrier.returnRequestBytes(unrun);
    }
    PeerIdentities.Hold hold = peerHold.getAndSet(RELEASED);
    if (hold != null) {
      hold.close();
    }
    carrier.sessionClosed(this);
  }

  /** When the session must have authenticated ({@link System#nanoTime}). */
  long authDeadline() {
    return authDeadline;
  }

  /**
   * Hands the session the timer's pending check of its handshake deadline, or, with null, ends
   * the watch (authenticated or closed) and cancels the check.
   */
  void watchHandshake(java.util.concurrent.Future<?> check) {
    if (check == null) {
      Object old = handshakeWatch.getAndSet(WATCH_DONE);
      if (old instanceof java.util.concurrent.Future<?> f) {
        f.cancel(false);
      }
    } else if (!handshakeWatch.compareAndSet(null, check)) {
      check.cancel(false);
    }
  }

  /** Called by the transport's timer. */
  void checkDeadlines(long now) {
    if (!authenticated && now - authDeadline > 0 && socket.isOpen()) {
      socket.close(new TransportTimeoutException("not authenticated within "
          + carrier.settings().handshakeTimeoutNanos() / 1_000_000 + " ms"));
      return;
    }
    socket.checkStalled(now);
  }

  @Override
  public void violated(ProtocolException e) {
    sendError(0, ErrorCode.PROTOCOL, e.getMessage());
  }

  boolean isOpen() {
    return socket.isOpen();
  }

  void close() {
    socket.close();
  }
}
