package io.sluice.transport.tcp;

import io.sluice.transport.MessageHandler;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportOption;
import io.sluice.transport.TransportProvider;
import io.sluice.transport.TransportUnavailableException;
import io.sluice.transport.Connection;
import io.sluice.transport.shm.ShmArena;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.Optional;

/**
 * The two providers built on Java NIO sockets. {@code tcp} serves READs from a fixed set of
 * selector threads and, unless {@code sluice.transport.shm.enabled=false} or chosen explicitly, reads same-host
 * peers through shared memory; {@code shm} requires every peer to be on the same host.
 */
public final class TcpTransportProvider implements TransportProvider {
  /** How a transport uses shared memory. */
  enum ShmMode {
    OFF, PREFERRED, REQUIRED
  }

  private final String name;
  private final boolean shm;

  private TcpTransportProvider(String name, boolean shm) {
    this.name = name;
    this.shm = shm;
  }

  public static TcpTransportProvider tcp() {
    return new TcpTransportProvider("tcp", false);
  }

  public static TcpTransportProvider shm() {
    return new TcpTransportProvider("shm", true);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public boolean isAvailable() {
    return unavailabilityCause().isEmpty();
  }

  @Override
  public Optional<Throwable> unavailabilityCause() {
    if (!shm) {
      return Optional.empty();
    }
    Path dir = Path.of(TransportOption.SHM_DIR.defaultValue());
    return ShmArena.usable(dir) ? Optional.empty()
        : Optional.of(new TransportUnavailableException(dir + " is missing or not writable"));
  }

  @Override
  public Transport open(TransportConfig config, MessageHandler handler) throws TransportException {
    Settings settings = Settings.from(config);
    ShmMode mode;
    if (shm) {
      mode = ShmMode.REQUIRED;
    } else if (config.string(TransportOption.PROVIDER).equalsIgnoreCase("auto") && settings.shmEnabled()
        && ShmArena.usable(settings.shmDir())) {
      mode = ShmMode.PREFERRED;
    } else {
      mode = ShmMode.OFF;
    }
    return new TcpTransport(settings, handler, mode);
  }

  /**
   * Opens a tcp transport (no shared memory) for a provider built on it: it listens,
   * authenticates, carries requests to {@code handler} and serves VERBS_SETUP frames with
   * {@code setup}. The caller owns the transport; its regions are the caller's business.
   */
  public static Transport openCarrier(TransportConfig config, MessageHandler handler, ProviderSetup setup)
      throws TransportException {
    return new TcpTransport(Settings.from(config), handler, ShmMode.OFF, Optional.of(setup));
  }

  /**
   * Runs the message handler of a transport opened by {@link #openCarrier} on its handler
   * threads, for a request that arrived on the provider's own data path from the
   * authenticated peer {@code peerNode}. Completes with the handler's answer, exceptionally
   * with what the handler threw or failed with (a null answer is a failure).
   *
   * @throws IllegalArgumentException if {@code carrier} is not a tcp transport
   */
  public static CompletableFuture<ByteBuffer> runHandler(Transport carrier, long peerNode, ByteBuffer request) {
    if (!(carrier instanceof TcpTransport tcp)) {
      throw new IllegalArgumentException("not a tcp transport: " + carrier);
    }
    return tcp.runHandler(peerNode, request);
  }

  /**
   * Sends a VERBS_SETUP request on a connection of a transport opened by {@link #openCarrier}
   * and completes with the reply payload, or exceptionally with the peer's error (typed as
   * its ERROR code says), {@link io.sluice.transport.PeerClosedException} or a timeout after
   * the I/O deadline.
   *
   * @throws IllegalArgumentException if the connection is not a tcp connection, or the
   *     request exceeds {@link Frames#MAX_CONTROL_PAYLOAD}
   */
  public static CompletableFuture<ByteBuffer> setupRequest(Connection connection, ByteBuffer request) {
    if (!(connection instanceof TcpConnection tcp)) {
      throw new IllegalArgumentException("not a tcp connection: " + connection);
    }
    if (request.remaining() > Frames.MAX_CONTROL_PAYLOAD) {
      throw new IllegalArgumentException("set-up request of " + request.remaining() + " bytes exceeds "
          + Frames.MAX_CONTROL_PAYLOAD);
    }
    return tcp.control(FrameType.VERBS_SETUP, request);
  }
}
