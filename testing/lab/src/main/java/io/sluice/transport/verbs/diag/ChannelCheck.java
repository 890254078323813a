package io.sluice.transport.verbs.diag;

import io.sluice.transport.TransportException;
import io.sluice.transport.verbs.channel.ChannelFrames;
import io.sluice.transport.verbs.channel.RequestChannel;
import io.sluice.transport.verbs.channel.ResponderChannel;
import io.sluice.transport.verbs.rc.PreparedConnection;
import io.sluice.transport.verbs.rc.ProtectionDomain;
import io.sluice.transport.verbs.rc.RdmaNode;
import io.sluice.transport.verbs.rc.RdmaQueuePair;
import io.sluice.transport.verbs.rc.RdmaRegion;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A hostile requester against the answering end of a message channel, two nodes in this
 * JVM: a malformed frame, more requests than the credit, and a staged request pointing at
 * memory the requester never registered must each cost the requester its queue pair without
 * reaching the handler; a well-behaved requester is served afterwards. Not thread safe.
 */
final class ChannelCheck {
  private static final int CREDIT = 2;
  private static final int MAX_MESSAGE = 1 << 20;

  private ChannelCheck() {}

  /** Returns the number of steps that did not behave as they must. */
  static int run(InetSocketAddress serverAddress, long timeoutNanos, PrintStream out) throws IOException {
    long deadline = System.nanoTime() + timeoutNanos;
    RdmaNode.Settings settings = new RdmaNode.Settings(4096, 2, TimeUnit.SECONDS.toNanos(20), TimeUnit.SECONDS.toNanos(20));
    AtomicInteger handled = new AtomicInteger();
    CompletableFuture<Void> release = new CompletableFuture<>();
    int wrong = 0;
    ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    try (RdmaNode server = RdmaNode.open(serverAddress, settings);
        RdmaNode client = RdmaNode.open(new InetSocketAddress(serverAddress.getAddress(), 0), settings)) {
      Responder responder = new Responder(server, (peer, request) -> {
        handled.incrementAndGet();
        return release.thenApply(x -> request);
      });
      ByteBuffer scratch = ByteBuffer.allocateDirect(ChannelFrames.SLOT_BYTES * 8);
      try (RdmaRegion frames = client.registerLocal(scratch)) {
        // 1. A frame of an unknown type.
        RdmaQueuePair raw = responder.connect(client, deadline);
        ByteBuffer garbage = ByteBuffer.allocate(8).put(0, (byte) 99); // a whole header, type 99
        wrong += expectDropped("a frame of unknown type", raw, List.of(garbage), frames, deadline, out);

        // 2. One request more than the credit, sent without waiting for answers.
        raw = responder.connect(client, deadline);
        List<ByteBuffer> flood = new ArrayList<>();
        for (int i = 0; i <= CREDIT; i++) {
          flood.add(ChannelFrames.inline(ChannelFrames.Type.REQUEST, i, ByteBuffer.wrap(new byte[] {1})));
        }
        wrong += expectDropped("requests beyond the credit", raw, flood, frames, deadline, out);
        if (handled.get() > CREDIT) {
          out.println("DISNI-CHECK channel: the handler saw " + handled.get() + " requests, credit " + CREDIT);
          wrong++;
        }

        // 3. A staged request whose memory the requester never registered.
        int before = handled.get();
        raw = responder.connect(client, deadline);
        ByteBuffer bogus = ChannelFrames.staged(ChannelFrames.Type.REQUEST_STAGED, 1,
            new ChannelFrames.Staged(frames.address(), frames.rkey() ^ 0x5a5a, 4096));
        wrong += expectDropped("a staged request of unregistered memory", raw, List.of(bogus), frames, deadline, out);
        if (handled.get() != before) {
          out.println("DISNI-CHECK channel: a staged request of unregistered memory reached the handler");
          wrong++;
        }
      }
      release.complete(null);

      // 4. A well-behaved requester is still served, inline and staged.
      ProtectionDomain serverDomain = client.peerDomain(SERVER_NODE);
      RdmaQueuePair good;
      try {
        good = responder.connect(client, serverDomain, deadline, RequestChannel.sendSlots(CREDIT),
            RequestChannel.receiveSlots(CREDIT));
      } finally {
        serverDomain.release();
      }
      RequestChannel channel = RequestChannel.open(client, good, CREDIT, MAX_MESSAGE, timer, timeoutNanos);
      try {
        for (int size : new int[] {5, 100_000}) {
          ByteBuffer request = ByteBuffer.allocate(size);
          request.put(0, (byte) 42);
          ByteBuffer answer = await(channel.request(request), deadline);
          if (answer.remaining() != size || answer.get(0) != 42) {
            out.println("DISNI-CHECK channel: the echo of " + size + " bytes differs");
            wrong++;
          } else {
            out.println("DISNI-CHECK channel: a well-behaved requester got its " + size + "-byte answer");
          }
        }
      } finally {
        channel.close();
      }
    } catch (ExecutionException | TimeoutException e) {
      out.println("DISNI-CHECK channel: " + e);
      wrong++;
    } finally {
      timer.shutdownNow();
    }
    return wrong;
  }

  /** Sends the frames raw; the responder must close the queue pair within the deadline. */
  private static int expectDropped(String what, RdmaQueuePair raw, List<ByteBuffer> frames, RdmaRegion memory,
      long deadline, PrintStream out) {
    CompletableFuture<TransportException> closed = new CompletableFuture<>();
    raw.onFailure(closed::complete);
    ByteBuffer m = memory.buffer();
    for (int i = 0; i < frames.size(); i++) {
      int at = i * ChannelFrames.SLOT_BYTES;
      m.clear().position(at);
      m.put(frames.get(i).duplicate());
      try {
        raw.send(raw.prepareSend(memory.address() + at, ChannelFrames.SLOT_BYTES, memory.lkey()),
            frames.get(i).remaining(), true);
      } catch (IOException e) {
        out.println("DISNI-CHECK channel: sending " + what + " failed: " + e);
        return 1;
      }
    }
    try {
      TransportException cause = await(closed, deadline);
      out.println("DISNI-CHECK channel: " + what + " cost the requester its queue pair (" + cause.getMessage() + ")");
      return 0;
    } catch (ExecutionException | TimeoutException e) {
      out.println("DISNI-CHECK channel: " + what + " did NOT close the queue pair: " + e);
      raw.close();
      return 1;
    }
  }

  /** Node ids the two sides give each other (for their protection domains). */
  private static final long CLIENT_NODE = 7L;
  private static final long SERVER_NODE = 8L;

  /** The answering node: admits each connection for a new responder channel. */
  private record Responder(RdmaNode node, java.util.function.BiFunction<Long, ByteBuffer,
      CompletableFuture<ByteBuffer>> handler) {

    /** A raw requester queue pair in the client's own domain (it sends from local memory). */
    RdmaQueuePair connect(RdmaNode client, long deadline) throws IOException, ExecutionException, TimeoutException {
      return connect(client, client.localDomain(), deadline, 8, 8);
    }

    /** A requester queue pair in {@code domain} of the client; each side's queue pair in its peer's domain. */
    RdmaQueuePair connect(RdmaNode client, ProtectionDomain domain, long deadline, int sends, int receives)
        throws IOException, ExecutionException, TimeoutException {
      PreparedConnection prepared = await(client.prepare(node.address(), new RdmaQueuePair.Sizes(4, sends, receives),
          domain), deadline);
      ProtectionDomain clientDomain = node.peerDomain(CLIENT_NODE);
      try {
        node.admit(prepared.source(), new RdmaQueuePair.Sizes(4, ResponderChannel.sendSlots(CREDIT),
            ResponderChannel.receiveSlots(CREDIT)), clientDomain,
            qp -> ResponderChannel.open(node, qp, CREDIT, MAX_MESSAGE, CLIENT_NODE, handler));
      } finally {
        clientDomain.release();
      }
      return await(prepared.connect(), deadline);
    }
  }

  private static <T> T await(CompletableFuture<T> f, long deadline) throws ExecutionException, TimeoutException {
    try {
      return f.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TimeoutException("interrupted");
    }
  }
}
