package io.sluice.hadoop.rpc;

import io.sluice.transport.config.Check;
import io.sluice.transport.config.ConfigKey;
import io.sluice.transport.config.Parsers;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The engine's own configuration keys, declared with the transport's {@link ConfigKey} and read
 * from the Hadoop {@code Configuration} ({@link EngineSettings}). Every {@code sluice.transport.*}
 * key (see {@link io.sluice.transport.config.TransportKeys}) is also read from the same
 * Configuration and passed to the transport unchanged; this list holds only what the engine adds.
 */
public final class SluiceRpcOption {
  public static final ConfigKey<Long> READ_THRESHOLD_BYTES = ConfigKey.of("sluice.rpc.readThresholdBytes", "65536",
      "Request and response bodies larger than this stay in registered memory and the peer READs"
          + " them; smaller ones travel inside the message.",
      Parsers.bytes(), Check.between(0, Integer.MAX_VALUE));
  public static final ConfigKey<Long> IO_TIMEOUT_MS = ConfigKey.of("sluice.rpc.ioTimeoutMs", "120000",
      "The engine's deadline for a READ and for a call's answer, given to the transport as"
          + " sluice.transport.ioTimeoutMs unless that key is set (the transport's own default of 30 s is too"
          + " short for Hadoop calls without ipc.client.rpc-timeout.ms); ipc.client.rpc-timeout.ms, when set,"
          + " is the call's deadline.",
      Parsers.duration(TimeUnit.MILLISECONDS), Check.positive());
  public static final ConfigKey<Long> SERVER_MAX_INCOMING_BODY_BYTES = ConfigKey.of(
      "sluice.rpc.server.maxIncomingBodyBytes", "256m",
      "Registered memory a server holds for request bodies it READs from callers, from the READ until"
          + " the call is queued; a call whose body does not fit waits for room until the io deadline."
          + " At least ipc.maximum.data.length.",
      Parsers.bytes(), Check.between(1, Long.MAX_VALUE));
  public static final ConfigKey<Long> SERVER_CALLER_CONNECTION_IDLE_MS = ConfigKey.of(
      "sluice.rpc.server.callerConnectionIdleMs", "10000",
      "A connection a server opened back to a caller to READ its request bodies is closed after this"
          + " long without a READ.",
      Parsers.duration(TimeUnit.MILLISECONDS), Check.positive());
  public static final ConfigKey<String> DISCOVERY_ACL = ConfigKey.of("security.sluice.transport.discovery.protocol.acl", "*",
      "With hadoop.security.authorization: who may ask a server where its transport listens"
          + " (clients that may not use the stock TCP path).",
      Parsers.string());

  private static final List<ConfigKey<?>> ALL = List.of(READ_THRESHOLD_BYTES, IO_TIMEOUT_MS,
      SERVER_MAX_INCOMING_BODY_BYTES, SERVER_CALLER_CONNECTION_IDLE_MS, DISCOVERY_ACL);

  private SluiceRpcOption() {}

  /** Every engine key, in the order of the README's table. */
  public static List<ConfigKey<?>> all() {
    return ALL;
  }
}
