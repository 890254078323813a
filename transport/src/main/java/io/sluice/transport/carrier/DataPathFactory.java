package io.sluice.transport.carrier;

import io.sluice.transport.TransportException;

/**
 * Opens a {@link DataPath} for a transport. The tcp provider finds one through {@code
 * META-INF/services/io.sluice.transport.carrier.DataPathFactory} and, when it is {@link #usable},
 * reads same-host peers through it; a provider that requires the path opens it itself.
 * Implementations are stateless and thread safe, with a public no-argument constructor.
 */
public interface DataPathFactory {
  /** The path's name, as {@link DataPath#name()}. */
  String name();

  /**
   * Whether the tcp provider under {@code auto} should use the path with these settings: its key
   * turns it on and it can run here (its directory exists and is writable, ...).
   */
  boolean usable(Settings settings);

  /** Opens the path of the transport with node id {@code node}. */
  DataPath open(Settings settings, long node) throws TransportException;
}
