package io.sluice.transport;

import java.util.Optional;

/**
 * A way to move bytes: tcp, shm or verbs. Availability is a question a provider answers without
 * side effects, so selection and tests can ask it first.
 */
public interface TransportProvider {
  String name();

  boolean isAvailable();

  /** Why {@link #isAvailable()} is false; empty when available. */
  Optional<Throwable> unavailabilityCause();

  /** Opens an endpoint. @throws TransportUnavailableException if the provider cannot run here. */
  Transport open(TransportConfig config, MessageHandler handler) throws TransportException;

  default void ensureAvailability() throws TransportUnavailableException {
    Optional<Throwable> cause = unavailabilityCause();
    if (cause.isPresent()) {
      throw new TransportUnavailableException(
          "provider " + name() + " is unavailable: " + cause.get().getMessage(), cause.get());
    }
  }
}
