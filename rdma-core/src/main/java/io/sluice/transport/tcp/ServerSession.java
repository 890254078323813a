package io.sluice.transport.tcp;

import io.sluice.transport.AuthenticationFailedException;
import io.sluice.transport.MessageTooLargeException;
import io.sluice.transport.PeerClosedException;
import io.sluice.transport.ProtocolException;
import io.sluice.transport.ReadOutOfBoundsException;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportTimeoutException;
import io.sluice.transport.region.Region;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The accepting side of one connection: authenticates the peer, then serves its READs (on this
 * session's own thread: key and bounds check, then one gather write straight from the
 * registered memory) and hands its requests to the transport's handler pool. A peer that breaks
 * the protocol or exceeds its request credit is disconnected with one log line; nothing it sends
 * can affect another session.
 *
 * <p>Owned by its {@link TcpTransport}; runs on one thread from {@link #run()}.
 */
final class ServerSession implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(ServerSession.class);

  private final TcpTransport transport;
  private final FrameChannel channel;
  private final String remote;
  private final java.net.InetAddress remoteAddress;
  private final long authDeadline;
  private final AtomicInteger requestsInFlight = new AtomicInteger();
  /** Bytes of requests read and not yet answered; when exhausted, this session stops reading. */
  private final java.util.concurrent.Semaphore requestBytes;
  private volatile boolean authenticated;
  private long peerNode;

  ServerSession(TcpTransport transport, FrameChannel channel, java.net.InetSocketAddress remoteSocket) {
    this.transport = transport;
    this.channel = channel;
    this.remote = String.valueOf(remoteSocket);
    this.remoteAddress = remoteSocket.getAddress();
    this.authDeadline = System.nanoTime() + transport.settings().connectTimeoutNanos();
    this.requestBytes = new java.util.concurrent.Semaphore(requestByteBudget(transport.settings()));
  }

  /** Four maximal messages, so one peer's requests cannot pin more than that in this process. */
  static int requestByteBudget(Settings s) {
    return (int) Math.min(Integer.MAX_VALUE, 4L * s.maxMessageBytes());
  }

  @Override
  public void run() {
    ByteBuffer scratch = ByteBuffer.allocateDirect(64 * 1024);
    try {
      authenticate(scratch);
      authenticated = true;
      while (true) {
        FrameHeader h = channel.readHeader(scratch, transport.settings().maxMessageBytes());
        dispatch(h);
      }
    } catch (PeerClosedException e) {
      LOG.debug("session {} ended: {}", remote, e.getMessage());
    } catch (AuthenticationFailedException e) {
      LOG.warn("Rejected connection from {}: {}", remote, e.getMessage());
    } catch (ProtocolException e) {
      LOG.warn("Closing connection from {}: protocol violation: {}", remote, e.getMessage());
      sendErrorQuietly(0, ErrorCode.PROTOCOL, e.getMessage());
    } catch (IOException | RuntimeException e) {
      if (channel.isOpen() && !transport.isClosing()) {
        LOG.warn("Closing connection from {}: {}", remote, e.toString());
      }
    } finally {
      close();
      io.sluice.transport.region.DirectMemory.free(scratch);
    }
  }

  private void authenticate(ByteBuffer scratch) throws IOException {
    FrameHeader h = channel.readHeader(scratch, Frames.MAX_CONTROL_PAYLOAD);
    if (h.type() != FrameType.HELLO) {
      throw new ProtocolException("expected HELLO, got " + h.type());
    }
    Frames.Hello hello = Frames.Hello.decode(channel.readPayload(h.payloadLength()));
    if (hello.version() != Frames.VERSION) {
      sendErrorQuietly(0, ErrorCode.PROTOCOL, "unsupported protocol version " + hello.version());
      throw new ProtocolException("peer speaks protocol version " + hello.version());
    }
    Handshake hs = transport.handshake();
    byte[] nonce = Handshake.nonce();
    long self = transport.nodeId();
    byte[] proof = hs.serverProof(hello.nonce(), nonce, self, hello.node());
    channel.writeFrame(FrameType.CHALLENGE, 0,
        new Frames.Challenge(Frames.VERSION, self, nonce, proof).encode());
    h = channel.readHeader(scratch, Frames.MAX_CONTROL_PAYLOAD);
    if (h.type() != FrameType.AUTH) {
      throw new ProtocolException("expected AUTH, got " + h.type());
    }
    Frames.Auth auth = Frames.Auth.decode(channel.readPayload(h.payloadLength()));
    if (!Handshake.matches(hs.clientProof(nonce, hello.nonce(), hello.node(), self), auth.proof())) {
      sendErrorQuietly(0, ErrorCode.AUTHENTICATION_FAILED, "authentication failed");
      throw new AuthenticationFailedException("client proof does not match the shared secret");
    }
    peerNode = hello.node();
    channel.writeFrame(FrameType.AUTH_OK, 0);
  }

  private void dispatch(FrameHeader h) throws IOException {
    switch (h.type()) {
      case READ_REQUEST -> {
        checkControlLength(h);
        serveRead(h.correlationId(), Frames.ReadRequestFrame.decode(channel.readPayload(h.payloadLength())));
      }
      case REQUEST -> acceptRequest(h);
      case SHM_HELLO -> {
        expectEmpty(h);
        transport.shm().ifPresentOrElse(
            arena -> write(FrameType.SHM_INFO, h.correlationId(), arena.info().encode()),
            () -> sendError(h.correlationId(), ErrorCode.SHM_UNAVAILABLE, "peer has no shared memory arena"));
      }
      case SHM_OPEN -> {
        checkControlLength(h);
        serveShmOpen(h.correlationId(), Frames.ShmOpen.decode(channel.readPayload(h.payloadLength())));
      }
      case VERBS_SETUP -> {
        checkControlLength(h);
        serveSetup(h.correlationId(), channel.readPayload(h.payloadLength()));
      }
      default -> throw new ProtocolException("unexpected " + h.type() + " from a client");
    }
  }

  private void serveRead(long corr, Frames.ReadRequestFrame req) throws IOException {
    Region region;
    try {
      region = transport.regions().acquire(req.key(), peerNode);
    } catch (TransportException e) {
      sendError(corr, ErrorCode.of(e), e.getMessage());
      return;
    }
    try {
      long end = req.offset() + req.length();
      if (end < 0 || end > region.length()) {
        TransportException e = new ReadOutOfBoundsException(
            "READ [" + req.offset() + ", +" + req.length() + ") outside region of " + region.length() + " bytes");
        sendError(corr, ErrorCode.OUT_OF_BOUNDS, e.getMessage());
        return;
      }
      ByteBuffer data = region.buffer();
      data.limit((int) end).position((int) req.offset());
      channel.writeFrame(FrameType.READ_RESPONSE, corr, data);
    } finally {
      region.release();
    }
  }

  private void serveShmOpen(long corr, Frames.ShmOpen open) throws IOException {
    Region region;
    try {
      region = transport.regions().acquire(open.key(), peerNode);
    } catch (TransportException e) {
      sendError(corr, ErrorCode.of(e), e.getMessage());
      return;
    }
    try {
      var loc = region.shmLocation();
      if (loc.isEmpty()) {
        sendError(corr, ErrorCode.SHM_UNAVAILABLE, "region is not in shared memory");
        return;
      }
      write(FrameType.SHM_REGION, corr, new Frames.ShmRegion(
          loc.get().path(), loc.get().fileOffset(), region.length(), loc.get().slot()).encode());
    } finally {
      region.release();
    }
  }

  private void serveSetup(long corr, ByteBuffer request) {
    var setup = transport.providerSetup();
    if (setup.isEmpty()) {
      sendError(corr, ErrorCode.PROTOCOL, "this endpoint serves no provider set-up (it is not a verbs transport)");
      return;
    }
    ByteBuffer reply;
    try {
      reply = setup.get().serve(peerNode, remoteAddress, request);
    } catch (TransportException e) {
      sendError(corr, ErrorCode.of(e), e.getMessage());
      return;
    } catch (RuntimeException e) {
      LOG.warn("Provider set-up for {} failed", remote, e);
      sendError(corr, ErrorCode.PROTOCOL, "set-up failed: " + e);
      return;
    }
    if (reply.remaining() > Frames.MAX_CONTROL_PAYLOAD) {
      sendError(corr, ErrorCode.PROTOCOL, "set-up reply of " + reply.remaining() + " bytes");
      return;
    }
    write(FrameType.VERBS_SETUP_REPLY, corr, reply);
  }

  private void acceptRequest(FrameHeader h) throws IOException {
    int limit = transport.settings().maxRequestsInFlight();
    if (requestsInFlight.incrementAndGet() > limit) {
      throw new ProtocolException("peer exceeded its credit of " + limit + " requests in flight");
    }
    int size = h.payloadLength();
    try {
      if (!requestBytes.tryAcquire(size, transport.settings().ioTimeoutNanos(), java.util.concurrent.TimeUnit.NANOSECONDS)) {
        throw new TransportTimeoutException("handlers did not free request memory within the I/O deadline");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PeerClosedException("interrupted");
    }
    ByteBuffer message;
    try {
      message = channel.readPayload(size);
    } catch (IOException e) {
      requestBytes.release(size);
      throw e;
    }
    long corr = h.correlationId();
    CompletableFuture<ByteBuffer> reply;
    try {
      reply = transport.runHandler(peerNode, message);
    } catch (RuntimeException e) {
      reply = CompletableFuture.failedFuture(e);
    }
    reply.whenComplete((response, error) -> {
      // The credit returns before the answer is written: the peer may send its next request
      // as soon as it reads this answer, and must find the credit free by then.
      requestsInFlight.decrementAndGet();
      requestBytes.release(size);
      if (error != null) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        sendError(corr, ErrorCode.HANDLER_FAILED, String.valueOf(cause));
      } else if (response == null) {
        sendError(corr, ErrorCode.HANDLER_FAILED, "handler returned no response");
      } else if (response.remaining() > transport.settings().maxMessageBytes()) {
        sendError(corr, ErrorCode.MESSAGE_TOO_LARGE,
            new MessageTooLargeException("response of " + response.remaining() + " bytes exceeds "
                + transport.settings().maxMessageBytes()).getMessage());
      } else {
        write(FrameType.RESPONSE, corr, response);
      }
    });
  }

  private void checkControlLength(FrameHeader h) throws ProtocolException {
    if (h.payloadLength() > Frames.MAX_CONTROL_PAYLOAD) {
      throw new ProtocolException(h.type() + " payload of " + h.payloadLength() + " bytes");
    }
  }

  private void expectEmpty(FrameHeader h) throws ProtocolException {
    if (h.payloadLength() != 0) {
      throw new ProtocolException(h.type() + " must have no payload");
    }
  }

  /** Writes a frame from any thread; a failure closes the session (the peer then sees it closed). */
  private void write(FrameType type, long corr, ByteBuffer payload) {
    try {
      channel.writeFrame(type, corr, payload);
    } catch (IOException e) {
      if (!(e instanceof PeerClosedException)) {
        LOG.warn("Closing connection from {}: write failed: {}", remote, e.getMessage());
      }
      close();
    }
  }

  private void sendError(long corr, ErrorCode code, String message) {
    write(FrameType.ERROR, corr, new Frames.ErrorFrame(code, message).encode());
  }

  private void sendErrorQuietly(long corr, ErrorCode code, String message) {
    try {
      channel.writeFrame(FrameType.ERROR, corr, new Frames.ErrorFrame(code, message).encode());
    } catch (IOException | RuntimeException ignored) {
      // the connection is being closed for another reason already
    }
  }

  /** Called by the transport's timer. */
  void checkDeadlines(long now) {
    if (!authenticated && now - authDeadline > 0 && channel.isOpen()) {
      LOG.warn("Closing connection from {}: not authenticated within the connect deadline", remote);
      channel.close();
      return;
    }
    if (channel.checkStalled(now)) {
      LOG.warn("Closing connection from {}: socket I/O stalled past the deadline", remote);
    }
  }

  boolean isOpen() {
    return channel.isOpen();
  }

  void close() {
    channel.close();
    transport.sessionClosed(this);
  }

}
