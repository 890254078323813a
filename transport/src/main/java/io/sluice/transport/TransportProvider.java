package io.sluice.transport;

import io.sluice.transport.config.ConfigKey;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * A way to move bytes: tcp, shm or verbs. Availability is a question a provider answers without
 * side effects, so selection and tests can ask it first.
 */
public interface TransportProvider {
  String name();

  /** Whether the provider can run here: true exactly when {@link #unavailabilityCause()} is empty. */
  default boolean isAvailable() {
    return unavailabilityCause().isEmpty();
  }

  /** Why {@link #isAvailable()} is false; empty when available. */
  Optional<Throwable> unavailabilityCause();

  /**
   * Where {@code auto} tries this provider: lower first, in the order providers are found among
   * equals. Empty if {@code auto} never chooses it on its own (shm, which {@code auto} uses as a
   * data path of tcp). The default, 0, puts a provider before tcp (100): a provider on the class
   * path beside tcp is there to be preferred (verbs).
   */
  default OptionalInt autoPreference() {
    return OptionalInt.of(0);
  }

  /**
   * The configuration keys only this provider reads, beyond {@link
   * io.sluice.transport.config.TransportKeys}. Declared whether or not the provider can run here,
   * so that a value it would refuse is refused on every host ({@link Transports#validate}).
   */
  default List<ConfigKey<?>> keys() {
    return List.of();
  }

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
