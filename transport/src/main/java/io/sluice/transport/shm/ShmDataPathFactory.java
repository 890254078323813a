package io.sluice.transport.shm;

import io.sluice.transport.TransportException;
import io.sluice.transport.carrier.DataPath;
import io.sluice.transport.carrier.DataPathFactory;
import io.sluice.transport.carrier.Settings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens the shared-memory {@link DataPath} of a transport: its arena under {@code
 * sluice.transport.shm.dir}, mapping peers' registered files below {@code
 * sluice.transport.shm.trustedFileRoots}; its regions are sealed memfds unless {@code
 * sluice.transport.shm.sealed} is off or {@link SealedMemory} is unavailable. The tcp provider uses it under {@code auto} while {@code
 * sluice.transport.shm.enabled} is on and the folder is writable. Stateless; thread safe.
 */
public final class ShmDataPathFactory implements DataPathFactory {
  private static final Logger LOG = LoggerFactory.getLogger(ShmDataPathFactory.class);

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
    ShmArena arena = ShmArena.open(settings.shmDir(), node, settings.shmSealed());
    if (arena.sealed()) {
      LOG.info("shm regions of {} are sealed memfds: no process can shorten them under a reader", arena.directory());
    } else {
      LOG.info("shm regions of {} are files: {}", arena.directory(), settings.shmSealed()
          ? SealedMemory.unavailabilityCause().orElse("") : "sluice.transport.shm.sealed is off");
    }
    return new ShmDataPath(arena, settings.shmTrustedFileRoots());
  }
}
