package io.sluice.transport.shm;

import io.sluice.transport.TransportException;
import io.sluice.transport.carrier.DataPath;
import io.sluice.transport.carrier.DataPathFactory;
import io.sluice.transport.carrier.Settings;

/**
 * Opens the shared-memory {@link DataPath} of a transport: its arena under {@code
 * sluice.transport.shm.dir}, mapping peers' registered files below {@code
 * sluice.transport.shm.trustedFileRoots}. The tcp provider uses it under {@code auto} while {@code
 * sluice.transport.shm.enabled} is on and the folder is writable. Stateless; thread safe.
 */
public final class ShmDataPathFactory implements DataPathFactory {
  @Override
  public String name() {
    return "shm";
  }

  @Override
  public boolean usable(Settings settings) {
    return settings.shmEnabled() && ShmArena.usable(settings.shmDir());
  }

  @Override
  public DataPath open(Settings settings, long node) throws TransportException {
    return new ShmDataPath(ShmArena.open(settings.shmDir(), node), settings.shmTrustedFileRoots());
  }
}
