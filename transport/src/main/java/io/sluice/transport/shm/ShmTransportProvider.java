package io.sluice.transport.shm;

import io.sluice.transport.MessageHandler;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportOption;
import io.sluice.transport.TransportProvider;
import io.sluice.transport.TransportUnavailableException;
import io.sluice.transport.tcp.TcpTransportProvider;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * The {@code shm} provider: the tcp transport with shared memory required, so every peer must
 * be on this host and every READ of an allocated region is a copy from the peer's mapped file
 * (regions registered from files elsewhere are read over the carrier). {@code auto} never picks
 * it on its own; it uses shared memory as tcp's data path for same-host peers instead. Stateless;
 * thread safe.
 */
public final class ShmTransportProvider implements TransportProvider {
  @Override
  public String name() {
    return "shm";
  }

  @Override
  public Optional<Throwable> unavailabilityCause() {
    Path dir = Path.of(TransportOption.SHM_DIR.defaultValue());
    return ShmArena.usable(dir) ? Optional.empty()
        : Optional.of(new TransportUnavailableException(dir + " is missing or not writable"));
  }

  @Override
  public OptionalInt autoPreference() {
    return OptionalInt.empty();
  }

  @Override
  public Transport open(TransportConfig config, MessageHandler handler) throws TransportException {
    return TcpTransportProvider.openWithPath(name(), config, handler, new ShmDataPathFactory(), true);
  }
}
