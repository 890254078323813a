package io.sluice.transport.tcp;

import io.sluice.transport.MessageHandler;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportOption;
import io.sluice.transport.TransportProvider;
import io.sluice.transport.TransportUnavailableException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The two providers built on Java NIO sockets. {@code tcp} serves READs from a responder thread
 * and, unless {@code sluice.transport.shm.enabled=false} or chosen explicitly, reads same-host
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
}
