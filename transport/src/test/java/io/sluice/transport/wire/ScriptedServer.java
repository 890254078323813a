package io.sluice.transport.wire;

import io.sluice.transport.NodeAddress;
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.crypto.NodeIdentity;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.CompletableFuture;

/**
 * A fake tcp server for client-side tests: it accepts one connection, runs the real handshake
 * (or not), then follows a script that may do anything a broken or hostile server could.
 * Closing it closes the listener and the accepted socket. The script runs on its own thread;
 * {@link #finished()} completes when it returns or fails.
 */
public final class ScriptedServer implements AutoCloseable {
  /** The key pair the fake server proves its node id with. */
  public static final NodeIdentity IDENTITY = NodeIdentity.generate();
  /** The node id of the fake server. */
  public static final long NODE = IDENTITY.nodeId();

  @FunctionalInterface
  public interface Script {
    void run(RawFrameSocket peer) throws Exception;
  }

  private final ServerSocket listener;
  private final CompletableFuture<Void> finished = new CompletableFuture<>();
  private volatile Socket accepted;

  private ScriptedServer(Script script) throws IOException {
    listener = new ServerSocket(0, 4, InetAddress.getLoopbackAddress());
    Thread t = new Thread(() -> {
      try (Socket s = listener.accept()) {
        accepted = s;
        script.run(new RawFrameSocket(s));
        finished.complete(null);
      } catch (Throwable e) {
        finished.completeExceptionally(e);
      }
    }, "scripted-server");
    t.setDaemon(true);
    t.start();
  }

  /** Starts a server that runs {@code script} on the raw socket, before any handshake. */
  public static ScriptedServer raw(Script script) throws IOException {
    return new ScriptedServer(script);
  }

  /** Starts a server that authenticates the client with the test secret, then runs {@code script}. */
  public static ScriptedServer authenticated(Script script) throws IOException {
    return new ScriptedServer(peer -> {
      peer.acceptHandshake(TransportTestSupport.SECRET, IDENTITY);
      script.run(peer);
    });
  }

  public NodeAddress address() {
    return new NodeAddress("127.0.0.1", listener.getLocalPort());
  }

  public CompletableFuture<Void> finished() {
    return finished;
  }

  @Override
  public void close() throws IOException {
    listener.close();
    Socket s = accepted;
    if (s != null) {
      s.close();
    }
  }
}
