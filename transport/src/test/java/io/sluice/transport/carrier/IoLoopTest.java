package io.sluice.transport.carrier;

import static io.sluice.transport.TransportTestSupport.await;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.ProtocolException;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportUnavailableException;
import io.sluice.transport.wire.FrameHeader;
import io.sluice.transport.wire.FrameType;
import io.sluice.transport.wire.Frames;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A connection whose handling throws anything, an {@link Error} included, is closed with a cause
 * that says so, and its selector thread goes on serving everything else; a selector thread that
 * dies anyway closes its connections saying so and refuses new ones.
 */
class IoLoopTest {
  /** Receives frames by throwing {@code thrown}; reports how the connection closed. */
  private static final class ThrowingReceiver implements SessionSocket.Receiver {
    final CompletableFuture<IOException> closed = new CompletableFuture<>();
    private final Error thrown;

    ThrowingReceiver(Error thrown) {
      this.thrown = thrown;
    }

    @Override
    public long maxPayload(FrameHeader h) {
      return Frames.MAX_CONTROL_PAYLOAD;
    }

    @Override
    public boolean admit(FrameHeader h) {
      return true;
    }

    @Override
    public void frame(FrameHeader h, ByteBuffer payload) {
      throw thrown;
    }

    @Override
    public void violated(ProtocolException e) {
      // the close cause is what the test checks
    }

    @Override
    public void closed(IOException cause) {
      closed.complete(cause);
    }
  }

  @Test
  void anErrorWhileServingOneConnectionClosesItAndTheLoopGoesOn() throws Exception {
    IoLoop loop = new IoLoop("io-loop-test", Selector.open());
    try (ServerSocketChannel listener = ServerSocketChannel.open()
            .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        SocketChannel peer = SocketChannel.open(listener.getLocalAddress());
        SocketChannel served = listener.accept()) {
      served.configureBlocking(false);
      ThrowingReceiver receiver = new ThrowingReceiver(new OutOfMemoryError("test: no heap for this frame"));
      SessionSocket socket = new SessionSocket(served, loop, TimeUnit.SECONDS.toNanos(60), true, receiver);
      loop.register(served, socket);

      peer.write(new FrameHeader(FrameType.REQUEST, 0, 1).toBuffer());

      IOException cause = await(receiver.closed);
      assertInstanceOf(TransportException.class, cause);
      assertTrue(cause.getMessage().contains("no heap for this frame"), "close cause: " + cause.getMessage());
      CompletableFuture<Thread> ranOn = new CompletableFuture<>();
      loop.execute(() -> ranOn.complete(Thread.currentThread()));
      assertTrue(await(ranOn).getName().equals("io-loop-test"), "the task ran on " + ranOn.join());
    } finally {
      loop.close();
    }
  }

  /** Receives nothing; reports how the connection closed. */
  private static SessionSocket quietSocket(SocketChannel served, IoLoop loop, ThrowingReceiver receiver)
      throws IOException {
    served.configureBlocking(false);
    return new SessionSocket(served, loop, TimeUnit.SECONDS.toNanos(60), true, receiver);
  }

  @Test
  void aDeadSelectorThreadClosesItsConnectionsAndRefusesNewOnes() throws Exception {
    Selector selector = Selector.open();
    IoLoop loop = new IoLoop("io-loop-dying", selector);
    try (ServerSocketChannel listener = ServerSocketChannel.open()
            .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        SocketChannel peer = SocketChannel.open(listener.getLocalAddress());
        SocketChannel served = listener.accept();
        SocketChannel laterPeer = SocketChannel.open(listener.getLocalAddress());
        SocketChannel later = listener.accept()) {
      ThrowingReceiver receiver = new ThrowingReceiver(new AssertionError("no frame is sent"));
      loop.register(served, quietSocket(served, loop, receiver));
      CompletableFuture<Void> registered = new CompletableFuture<>();
      loop.execute(() -> registered.complete(null));
      await(registered);

      selector.close(); // the loop's next select fails: the thread cannot go on

      IOException cause = await(receiver.closed);
      assertInstanceOf(TransportUnavailableException.class, cause, "close cause: " + cause);
      assertTrue(cause.getMessage().contains("io-loop-dying"), "close cause: " + cause.getMessage());
      ThrowingReceiver refused = new ThrowingReceiver(new AssertionError("no frame is sent"));
      loop.register(later, quietSocket(later, loop, refused));
      assertInstanceOf(TransportUnavailableException.class, await(refused.closed));
    } finally {
      loop.close();
    }
  }
}
