package io.sluice.transport.verbs.provider;

import io.sluice.transport.Connection;
import io.sluice.transport.MessageTooLargeException;
import io.sluice.transport.NodeAddress;
import io.sluice.transport.PeerClosedException;
import io.sluice.transport.ProtocolException;
import io.sluice.transport.ReadOutOfBoundsException;
import io.sluice.transport.ReadRequest;
import io.sluice.transport.RegionRevokedException;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportTimeoutException;
import io.sluice.transport.UnknownKeyException;
import io.sluice.transport.carrier.CarrierConnection;
import io.sluice.transport.verbs.channel.RequestChannel;
import io.sluice.transport.verbs.rc.DeviceQuery;
import io.sluice.transport.verbs.rc.PageCrossingReads;
import io.sluice.transport.verbs.rc.PreparedConnection;
import io.sluice.transport.verbs.rc.ProtectionDomain;
import io.sluice.transport.verbs.rc.RdmaNode;
import io.sluice.transport.verbs.rc.RdmaQueuePair;
import io.sluice.transport.verbs.rc.RdmaRead;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * A verbs connection: an authenticated tcp connection for set-up, a reliable-connected queue
 * pair carrying requests and answers as SEND/RECV ({@link RequestChannel}), and one for
 * READs, kept apart so that a READ the device refuses (which finishes its queue pair) never
 * fails a request. Every READ is checked against the live length its
 * owner reported for the key ({@link PeerKeys}) before it is posted. When the device fails a
 * READ, the owner is asked about the key: a revoked or unknown key fails the READ with that
 * type; otherwise the READ failed only because its queue pair died, and it is retried once on
 * a new one. A dead queue pair is replaced (set up again over tcp) when the next READ needs it.
 *
 * <p>Thread safe: READs and requests may be issued from any thread.
 */
final class VerbsConnection implements Connection {

  /** One READ on its way; {@code info} is the key answer it was checked against. */
  private static final class Op {
    final ReadRequest request;
    final CompletableFuture<Void> future;
    final Registration local;
    CompletableFuture<SetupMessages.KeyInfo> info;
    SetupMessages.KeyInfo checked;
    int attempts;

    Op(ReadRequest request, CompletableFuture<Void> future, Registration local) {
      this.request = request;
      this.future = future;
      this.local = local;
    }
  }

  private final VerbsTransport transport;
  private final CarrierConnection tcp;
  private final RdmaNode node;
  private final PeerKeys keys;
  private final Reopening<RdmaQueuePair> queuePair;
  private final Reopening<RequestChannel> channel;
  /** On iWARP, short READs across a page boundary go as two (see {@link PageCrossingReads}). */
  private final boolean splitPageCrossing;
  private volatile InetSocketAddress peerRdma;
  private volatile boolean closed;

  VerbsConnection(VerbsTransport transport, CarrierConnection tcp, RdmaNode node) {
    this.transport = transport;
    this.tcp = tcp;
    this.node = node;
    this.splitPageCrossing = node.device().fabric() == DeviceQuery.Fabric.IWARP;
    this.keys = new PeerKeys(tcp);
    this.queuePair = new Reopening<>(this::openQueuePair, RdmaQueuePair::isOpen);
    this.channel = new Reopening<>(this::openChannel, RequestChannel::isOpen);
  }

  /** Learns the peer's RDMA listener and opens the message channel and the first READ queue pair. */
  CompletableFuture<Void> start() {
    return tcp.control(SetupMessages.SERVICE, SetupMessages.nodeInfoRequest()).thenCompose(reply -> {
      try {
        peerRdma = SetupMessages.address(reply);
      } catch (ProtocolException e) {
        throw new CompletionException(e);
      }
      return channel.open().thenCompose(c -> queuePair.open()).thenApply(qp -> null);
    });
  }

  private CompletableFuture<RdmaQueuePair> openQueuePair() {
    // Before any READ can be posted on it: a READ holding an answer from before asks again.
    keys.forgetAnswers();
    return connect(SetupMessages.Purpose.READS, transport.readSizes()).thenApply(qp -> {
      if (closed) {
        qp.close();
        throw new CompletionException(closedException());
      }
      return qp;
    });
  }

  private CompletableFuture<RequestChannel> openChannel() {
    return connect(SetupMessages.Purpose.MESSAGES, transport.requesterSizes()).thenApply(qp -> {
      try {
        RequestChannel c = transport.openRequestChannel(qp);
        if (closed) {
          c.close();
          throw new CompletionException(closedException());
        }
        return c;
      } catch (java.io.IOException e) {
        qp.close();
        throw new CompletionException(new TransportException("cannot open a message channel to " + peer() + ": "
            + e.getMessage(), e));
      }
    });
  }

  /**
   * Opens a queue pair to the peer's listener after the peer admitted its source for {@code
   * purpose}. A message channel's queue pair lives in the peer's protection domain, since the
   * peer READs the requests staged there; a READ queue pair in the node's own domain, where
   * the peer can read nothing.
   */
  private CompletableFuture<RdmaQueuePair> connect(SetupMessages.Purpose purpose, RdmaQueuePair.Sizes sizes) {
    CompletableFuture<PreparedConnection> preparing;
    if (purpose == SetupMessages.Purpose.MESSAGES) {
      try {
        ProtectionDomain domain = node.peerDomain(tcp.peerNode());
        try {
          preparing = node.prepare(peerRdma, sizes, domain);
        } finally {
          domain.release(); // the connection holds its own reference
        }
      } catch (java.io.IOException e) {
        preparing = CompletableFuture.failedFuture(e);
      }
    } else {
      preparing = node.prepare(peerRdma, sizes);
    }
    return preparing
        .thenCompose(prepared -> admitAndConnect(purpose, prepared))
        .exceptionallyCompose(error -> CompletableFuture.failedFuture(
            asTransportException(PeerKeys.unwrap(error), "RDMA connection to " + peer())));
  }

  private CompletableFuture<RdmaQueuePair> admitAndConnect(SetupMessages.Purpose purpose, PreparedConnection prepared) {
    CompletableFuture<RdmaQueuePair> connected;
    try {
      connected = tcp.control(SetupMessages.SERVICE, SetupMessages.admitRequest(purpose, prepared.source()))
          .thenCompose(reply -> prepared.connect());
    } catch (RuntimeException e) {
      connected = CompletableFuture.failedFuture(e);
    }
    return connected.whenComplete((qp, error) -> {
      if (error != null) {
        prepared.close();
      }
    });
  }

  /** The queue pair READs go out on, opened again if it died (for the isolation checks). */
  CompletableFuture<RdmaQueuePair> readQueuePair() {
    return queuePair.get(closed);
  }

  /** What this connection learned about the peer's keys. */
  PeerKeys keys() {
    return keys;
  }

  @Override
  public NodeAddress peer() {
    return tcp.peer();
  }

  @Override
  public long peerNode() {
    return tcp.peerNode();
  }

  @Override
  public byte[] peerIdentityKey() {
    return tcp.peerIdentityKey();
  }

  @Override
  public String dataPath() {
    return "verbs";
  }

  @Override
  public boolean isOpen() {
    return !closed && tcp.isOpen();
  }

  @Override
  public List<CompletableFuture<Void>> readBatch(List<ReadRequest> requests) {
    return transport.metrics().meterReads(this, requests, unmeteredReads(requests));
  }

  private List<CompletableFuture<Void>> unmeteredReads(List<ReadRequest> requests) {
    List<CompletableFuture<Void>> results = new ArrayList<>(requests.size());
    List<Op> ready = new ArrayList<>(requests.size());
    boolean open = isOpen();
    if (!open && !closed) {
      close(); // the peer went away: free the queue pair now
    }
    for (ReadRequest r : requests) {
      // A caller waiting on it polls the completion queues itself first: no wake-up, no hand-off.
      CompletableFuture<Void> f = transport.node().newFuture();
      results.add(f);
      if (!open) {
        f.completeExceptionally(closedException());
        continue;
      }
      if (r.remote().node() != tcp.peerNode()) {
        // As on the carrier: a READ of another node's region never goes to this peer.
        f.completeExceptionally(new io.sluice.transport.UnknownKeyException(String.format(
            "READ of a region of node %016x over the connection to node %016x (%s): refused", r.remote().node(),
            tcp.peerNode(), peer())));
        continue;
      }
      Optional<Registration> local = transport.destination(r.local());
      if (local.isEmpty() || !local.get().region().tryRetain()) {
        f.completeExceptionally(new IllegalArgumentException(
            "destination is not a live, writable region of this transport"));
        continue;
      }
      f.whenComplete((x, e) -> local.get().region().release());
      Op op = new Op(r, f, local.get());
      long key = r.remote().key();
      if (r.length() == 0) {
        keys.recheck(key, keys.peek(key)).whenComplete((info, e) -> {
          if (e != null) {
            fail(op, e);
          } else if (inBounds(op, info)) {
            f.complete(null);
          }
        });
        continue;
      }
      op.info = keys.lookup(key);
      if (op.info.isDone() && !op.info.isCompletedExceptionally()) {
        if (inBounds(op, op.info.join())) {
          ready.add(op);
        }
      } else {
        op.info.whenComplete((info, e) -> {
          if (e != null) {
            fail(op, e);
          } else if (inBounds(op, info)) {
            submit(List.of(op));
          }
        });
      }
    }
    submit(ready);
    return results;
  }

  /** Checks the READ against the owner's live length (and the descriptor's); fails it if outside. */
  private boolean inBounds(Op op, SetupMessages.KeyInfo info) {
    ReadRequest r = op.request;
    long limit = Math.min(info.length(), r.remote().length());
    if (r.remoteOffset() > limit || r.length() > limit - r.remoteOffset()) {
      op.future.completeExceptionally(new ReadOutOfBoundsException("READ [" + r.remoteOffset() + ", +"
          + r.length() + ") outside region of " + info.length() + " bytes"));
      return false;
    }
    op.checked = info;
    return true;
  }

  private void submit(List<Op> ops) {
    if (ops.isEmpty()) {
      return;
    }
    CompletableFuture<RdmaQueuePair> q = queuePair.get(closed);
    if (q.isDone() && !q.isCompletedExceptionally()) {
      post(q.join(), ops);
    } else {
      q.whenComplete((qp, error) -> {
        if (error != null) {
          Throwable cause = PeerKeys.unwrap(error);
          ops.forEach(op -> fail(op, cause));
        } else {
          post(qp, ops);
        }
      });
    }
  }

  private void post(RdmaQueuePair qp, List<Op> ops) {
    List<RdmaRead> reads = new ArrayList<>(ops.size());
    List<Op> current = new ArrayList<>(ops.size());
    for (Op op : ops) {
      // A READ that waited for a new queue pair while another READ's failure made the key be
      // asked about again waits for that answer: a revoked rkey posted now would kill the
      // new queue pair too, and with it the READs already retried once on it.
      Optional<CompletableFuture<SetupMessages.KeyInfo>> known = keys.peek(op.request.remote().key());
      if (op.info != null && (known.isEmpty() || known.get() != op.info)) {
        op.info = keys.lookup(op.request.remote().key());
        op.info.whenComplete((info, e) -> {
          if (e != null) {
            fail(op, e);
          } else if (inBounds(op, info)) {
            submit(List.of(op));
          }
        });
        continue;
      }
      current.add(op);
    }
    if (current.isEmpty()) {
      return;
    }
    ops = current;
    // Where each op's work requests start in the batch: one each, or two for a short READ
    // split at a page boundary on iWARP (PageCrossingReads).
    int[] firstRead = new int[ops.size() + 1];
    for (int i = 0; i < ops.size(); i++) {
      Op op = ops.get(i);
      ReadRequest r = op.request;
      RdmaRead read = new RdmaRead(op.checked.address() + r.remoteOffset(), op.checked.rkey(),
          op.local.mr().address() + r.localOffset(), op.local.mr().lkey(), r.length());
      firstRead[i] = reads.size();
      reads.addAll(splitPageCrossing ? PageCrossingReads.split(read) : List.of(read));
    }
    firstRead[ops.size()] = reads.size();
    List<CompletableFuture<Void>> posted = qp.readBatch(reads);
    for (int i = 0; i < ops.size(); i++) {
      Op op = ops.get(i);
      CompletableFuture<Void> done = firstRead[i + 1] - firstRead[i] == 1 ? posted.get(firstRead[i])
          : CompletableFuture.allOf(posted.subList(firstRead[i], firstRead[i + 1]).toArray(CompletableFuture[]::new));
      done.whenComplete((x, error) -> {
        if (error == null) {
          op.future.complete(null);
        } else {
          readFailed(op, PeerKeys.unwrap(error));
        }
      });
    }
  }

  /**
   * The device failed a READ, it timed out, or its queue pair died: the owner is asked about
   * the key either way, since a READ of a region revoked under it may also end in a timeout (a
   * device that keeps resending it, see {@code RetryPolicy}). A revoked or unknown key fails
   * it with that type; otherwise a timed-out READ fails with its timeout and any other is
   * retried once.
   */
  private void readFailed(Op op, Throwable cause) {
    if (!isOpen()) {
      op.future.completeExceptionally(closedException());
      return;
    }
    boolean timedOut = cause instanceof TransportTimeoutException;
    CompletableFuture<SetupMessages.KeyInfo> asked = keys.recheck(op.request.remote().key(), Optional.ofNullable(op.info));
    asked.whenComplete((info, error) -> {
      if (error != null) {
        if (timedOut && !isKeyVerdict(PeerKeys.unwrap(error)) && isOpen()) {
          op.future.completeExceptionally(cause);
        } else {
          fail(op, error);
        }
      } else if (!inBounds(op, info)) {
        return;
      } else if (timedOut) {
        op.future.completeExceptionally(cause);
      } else if (op.attempts == 0) {
        op.attempts++;
        op.info = asked;
        submit(List.of(op));
      } else {
        op.future.completeExceptionally(asTransportException(cause, "READ from " + peer()));
      }
    });
  }

  /** Whether the owner's answer about a key settles why a READ of it failed. */
  private static boolean isKeyVerdict(Throwable cause) {
    return cause instanceof RegionRevokedException || cause instanceof UnknownKeyException
        || cause instanceof ReadOutOfBoundsException;
  }

  private void fail(Op op, Throwable error) {
    Throwable cause = PeerKeys.unwrap(error);
    if (isKeyVerdict(cause)) {
      op.future.completeExceptionally(cause);
    } else if (!isOpen()) {
      op.future.completeExceptionally(closedException());
    } else {
      op.future.completeExceptionally(asTransportException(cause, "READ from " + peer()));
    }
  }

  @Override
  public CompletableFuture<ByteBuffer> request(ByteBuffer message) {
    return transport.metrics().meterRequest(unmeteredRequest(message));
  }

  private CompletableFuture<ByteBuffer> unmeteredRequest(ByteBuffer message) {
    if (message.remaining() > transport.maxMessageBytes()) {
      return CompletableFuture.failedFuture(new MessageTooLargeException(
          "request of " + message.remaining() + " bytes exceeds " + transport.maxMessageBytes()));
    }
    if (!isOpen()) {
      return CompletableFuture.failedFuture(closedException());
    }
    CompletableFuture<RequestChannel> c = channel.get(closed);
    if (c.isDone() && !c.isCompletedExceptionally()) {
      return c.join().request(message);
    }
    ByteBuffer copy = ByteBuffer.allocate(message.remaining()).put(message.duplicate()).flip();
    return c.handle((ch, error) -> {
      if (error != null) {
        Throwable cause = PeerKeys.unwrap(error);
        return CompletableFuture.<ByteBuffer>failedFuture(isOpen() ? cause : closedException());
      }
      return ch.request(copy);
    }).thenCompose(f -> f);
  }

  private PeerClosedException closedException() {
    return new PeerClosedException("connection to " + peer() + " is closed");
  }

  private static TransportException asTransportException(Throwable cause, String what) {
    return cause instanceof TransportException te ? te : new TransportException(what + " failed: " + cause, cause);
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    tcp.close();
    channel.close(RequestChannel::close);
    queuePair.close(RdmaQueuePair::close);
    transport.connectionClosed(this);
  }

  @Override
  public String toString() {
    return "VerbsConnection[" + peer() + (closed ? ", closed" : "") + "]";
  }
}
