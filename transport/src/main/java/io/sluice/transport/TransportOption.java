package io.sluice.transport;

import io.sluice.transport.config.ConfigKey;
import io.sluice.transport.config.TransportKeys;

/**
 * Every configuration key of the transport, by name, for the accessors of {@link TransportConfig}
 * ({@code config.intValue(TransportOption.PORT)}). Each constant is one declaration of {@link
 * TransportKeys}, which holds the kind, default, description and checks; the README's table
 * follows the same list. Integrations prefix nothing: Spark passes {@code
 * spark.shuffle.rdma.transport.*} through as {@code sluice.transport.*}, Hadoop and Flight pass
 * their own settings the same way.
 */
public enum TransportOption {
  PROVIDER(TransportKeys.PROVIDER),
  SECRET(TransportKeys.SECRET),
  BIND_HOST(TransportKeys.BIND_HOST),
  ADVERTISE_HOST(TransportKeys.ADVERTISE_HOST),
  PORT(TransportKeys.PORT),
  CONNECT_TIMEOUT_MS(TransportKeys.CONNECT_TIMEOUT_MS),
  IO_TIMEOUT_MS(TransportKeys.IO_TIMEOUT_MS),
  MAX_MESSAGE_BYTES(TransportKeys.MAX_MESSAGE_BYTES),
  MAX_QUEUED_REQUEST_BYTES(TransportKeys.MAX_QUEUED_REQUEST_BYTES),
  MAX_REQUESTS_IN_FLIGHT(TransportKeys.MAX_REQUESTS_IN_FLIGHT),
  HANDLER_THREADS(TransportKeys.HANDLER_THREADS),
  IO_THREADS(TransportKeys.IO_THREADS),
  MAX_CONNECTIONS(TransportKeys.MAX_CONNECTIONS),
  IDLE_TIMEOUT_MS(TransportKeys.IDLE_TIMEOUT_MS),
  HANDSHAKE_TIMEOUT_MS(TransportKeys.HANDSHAKE_TIMEOUT_MS),
  MAX_UNAUTHENTICATED(TransportKeys.MAX_UNAUTHENTICATED),
  MAX_UNAUTHENTICATED_PER_ADDRESS(TransportKeys.MAX_UNAUTHENTICATED_PER_ADDRESS),
  ENCRYPTION(TransportKeys.ENCRYPTION),
  ENCRYPTION_ENGINE(TransportKeys.ENCRYPTION_ENGINE),
  DATA_ENCRYPTED_AT_REST(TransportKeys.DATA_ENCRYPTED_AT_REST),
  SHM_DIR(TransportKeys.SHM_DIR),
  SHM_ENABLED(TransportKeys.SHM_ENABLED),
  SHM_SEALED(TransportKeys.SHM_SEALED),
  SHM_TRUSTED_FILE_ROOTS(TransportKeys.SHM_TRUSTED_FILE_ROOTS);

  private final ConfigKey<?> declaration;

  TransportOption(ConfigKey<?> declaration) {
    this.declaration = declaration;
  }

  /** The typed declaration of this key. */
  public ConfigKey<?> declaration() {
    return declaration;
  }

  public String key() {
    return declaration.key();
  }

  public String defaultValue() {
    return declaration.defaultValue();
  }

  public String description() {
    return declaration.description();
  }
}
