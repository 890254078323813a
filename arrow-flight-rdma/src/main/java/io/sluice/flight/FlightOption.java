package io.sluice.flight;

import io.sluice.transport.config.Check;
import io.sluice.transport.config.ConfigKey;
import io.sluice.transport.config.Parsers;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The Flight module's own configuration keys, declared with the transport's {@link ConfigKey}, beside
 * the transport's {@code sluice.transport.*} keys that the same {@link
 * io.sluice.transport.TransportConfig} carries; read them with {@code config.value(FlightOption.X)}.
 * {@link #all()} is the one list; the module README's table names the same keys.
 */
public final class FlightOption {
  public static final ConfigKey<Long> STAGING_BYTES = ConfigKey.of("sluice.flight.stagingBytes", "1073741824",
      "Client: registered memory one data-plane put may hold for batches the server has not READ yet;"
          + " past it, putNext waits for the server.",
      Parsers.bytes(), Check.positive());
  public static final ConfigKey<Long> STREAM_WINDOW = ConfigKey.of("sluice.flight.streamWindow", "4",
      "Client: batch bodies one get keeps READs in flight for; a put's batches the server has not yet"
          + " acknowledged, and the server's READs in flight per put.",
      Parsers.longInteger(), Check.positive());
  public static final ConfigKey<Long> WINDOW_BYTES = ConfigKey.of("sluice.flight.windowBytes", "134217728",
      "Server: body bytes one get may have announced to its reader and not yet had acknowledged"
          + " (at least one batch).",
      Parsers.bytes(), Check.positive());
  public static final ConfigKey<Long> ACK_TIMEOUT_MS = ConfigKey.of("sluice.flight.ackTimeoutMs", "60000",
      "How long the server waits on a stream's peer: an announced batch for its reader's acknowledgement,"
          + " a fully read get for its reader's half-close (on shm, for the reader to let go of its views),"
          + " a put for memory and for the writer's next batch; past it the stream is ended and the"
          + " reader loses access.",
      Parsers.duration(TimeUnit.MILLISECONDS), Check.positive());
  public static final ConfigKey<Boolean> DATA_PLANE = ConfigKey.of("sluice.flight.dataPlane", "true",
      "Client: negotiate the READ data plane with servers that offer it (false: always plain Flight).",
      Parsers.bool());
  public static final ConfigKey<Boolean> ZERO_COPY = ConfigKey.of("sluice.flight.zeroCopy", "true",
      "Client: on shm, take batch bodies as read-only views of the server's memory instead of READing"
          + " them (the server keeps a stream's table until no view of it is held).",
      Parsers.bool());
  public static final ConfigKey<Boolean> VERIFY_READS = ConfigKey.of("sluice.flight.verifyReads", "true",
      "Client: check every batch body READ (or viewed on shm) against the CRC32C the server computed"
          + " when it stored the table, before Arrow sees it; a mismatch fails the stream. Costs one"
          + " CRC32C pass over each body on the reading thread.",
      Parsers.bool());
  public static final ConfigKey<Long> READ_CHUNK_BYTES = ConfigKey.of("sluice.flight.readChunkBytes", "8388608",
      "Largest single range of the batched READ that fetches one batch body.", Parsers.bytes(), Check.positive());

  public static final ConfigKey<Boolean> REQUIRE_DATA_PLANE = ConfigKey.of("sluice.flight.requireDataPlane", "false",
      "Client: fail streams with UNAVAILABLE when the data plane cannot be used (wrong secret, no"
          + " transport, a server without it) instead of falling back to plain Flight.",
      Parsers.bool());
  public static final ConfigKey<Boolean> PUTS = ConfigKey.of("sluice.flight.puts", "false",
      "Server: accept puts (DoPut, and data-plane puts); when false they are refused with UNAUTHORIZED"
          + " and no table is stored or replaced.",
      Parsers.bool());
  public static final ConfigKey<Long> MAX_PUT_BYTES = ConfigKey.of("sluice.flight.maxPutBytes", "1073741824",
      "Server: most bytes (batch bodies and IPC metadata) one put may store; a larger put is refused with"
          + " RESOURCE_EXHAUSTED and nothing is stored.",
      Parsers.bytes(), Check.positive());

  public static final ConfigKey<Long> STREAM_THREADS = ConfigKey.of("sluice.flight.streamThreads", "32",
      "Server: threads that send plain Flight streams (DoGet, DoExchange of a table); a stream that finds"
          + " them all busy, for example with readers that stopped reading, is refused with RESOURCE_EXHAUSTED.",
      Parsers.longInteger(), Check.positive());

  public static final ConfigKey<Long> STREAM_THREADS_PER_CLIENT = ConfigKey.of(
      "sluice.flight.streamThreadsPerClient", "8",
      "Server: of those, how many one client may hold (a client is one gRPC connection: the peer's"
          + " address and port); its further streams are refused with RESOURCE_EXHAUSTED"
          + " while others are served.",
      Parsers.longInteger(), Check.positive());
  public static final ConfigKey<Long> STREAM_THREADS_PER_HOST = ConfigKey.of(
      "sluice.flight.streamThreadsPerHost", "24",
      "Server: of those, how many the clients of one host may hold together (the host is the address the"
          + " gRPC connection comes from: every loopback address is one host, an IPv6 address counts by its"
          + " /64); their further streams are refused with RESOURCE_EXHAUSTED while other hosts' clients are"
          + " served.",
      Parsers.longInteger(), Check.positive());
  public static final ConfigKey<Long> DATA_PLANE_GETS = ConfigKey.of("sluice.flight.dataPlaneGets", "64",
      "Server: threads that serve data-plane gets (each waits for its reader's pulls until the get ends"
          + " or ackTimeoutMs passes without one); a get that finds them all busy is refused with RESOURCE_EXHAUSTED.",
      Parsers.longInteger(), Check.positive());
  public static final ConfigKey<Long> DATA_PLANE_GETS_PER_CLIENT = ConfigKey.of(
      "sluice.flight.dataPlaneGetsPerClient", "16",
      "Server: of those, how many one client (one transport node) may hold; the data-plane offer tells"
          + " clients this number (or dataPlaneGetsPerHost, or dataPlaneGets, where smaller), and further"
          + " gets are refused with RESOURCE_EXHAUSTED.",
      Parsers.longInteger(), Check.positive());
  public static final ConfigKey<Long> DATA_PLANE_GETS_PER_HOST = ConfigKey.of(
      "sluice.flight.dataPlaneGetsPerHost", "48",
      "Server: of those, how many the transport nodes of one host may hold together (the host is the"
          + " address their transport connections come from, counted as for streamThreadsPerHost), so that"
          + " a host's several processes read at once and no host takes every get, however many node"
          + " identities it makes; further gets are refused with RESOURCE_EXHAUSTED.",
      Parsers.longInteger(), Check.positive());
  public static final ConfigKey<Long> GRANTS_PER_CLIENT = ConfigKey.of("sluice.flight.grantsPerClient", "1024",
      "Server: data-plane grants one transport node may hold unredeemed; past it, its grant requests are"
          + " refused (grants of other nodes are unaffected).",
      Parsers.longInteger(), Check.positive());
  public static final ConfigKey<Long> GRANTS_PER_HOST = ConfigKey.of("sluice.flight.grantsPerHost", "4096",
      "Server: data-plane grants the transport nodes of one host may hold unredeemed together (the host"
          + " counted as for dataPlaneGetsPerHost); past it, that host's grant requests are refused. All"
          + " grants together are at most 65536: past that, requests are refused; no grant is dropped to"
          + " make room for another.",
      Parsers.longInteger(), Check.positive());
  public static final ConfigKey<Long> MAX_PUT_TOTAL_BYTES = ConfigKey.of("sluice.flight.maxPutTotalBytes",
      "4294967296",
      "Server: most bytes (batch bodies and IPC metadata) that puts may hold at once, stored tables and"
          + " puts under way together; a put that would pass it is refused with RESOURCE_EXHAUSTED and nothing is stored.",
      Parsers.bytes(), Check.positive());
  public static final ConfigKey<Long> MAX_PUT_TABLES = ConfigKey.of("sluice.flight.maxPutTables", "64",
      "Server: most tables that puts may have stored at once; a put of a new table past it is refused with"
          + " RESOURCE_EXHAUSTED (replacing a table a put stored is allowed).",
      Parsers.longInteger(), Check.positive());

  public static final ConfigKey<Long> TOKEN_VALIDITY_MS = ConfigKey.of("sluice.flight.tokenValidityMs", "600000",
      "Client: how long the call tokens a SluiceFlightClient mints (one per server) are valid; each is"
          + " renewed when half of that has passed.",
      Parsers.duration(TimeUnit.MILLISECONDS), Check.positive());
  public static final ConfigKey<Long> TOKEN_MAX_VALIDITY_MS = ConfigKey.of("sluice.flight.tokenMaxValidityMs",
      "604800000",
      "Server: a call token that expires further than this from now is refused (mint tokens that live less"
          + " long), so a token that leaks does not open the server for ever.",
      Parsers.duration(TimeUnit.MILLISECONDS), Check.positive());
  public static final ConfigKey<String> TOKEN_AUDIENCES = ConfigKey.of("sluice.flight.tokenAudiences", "",
      "Server: audiences a call token may name beside the server's own location (comma-separated): other"
          + " locations clients reach it by, or one name for all servers of a run.",
      Parsers.string());
  public static final ConfigKey<Boolean> UNSIGNED_FALLBACK = ConfigKey.of("sluice.flight.unsignedFallback", "false",
      "Client with a secret, on a plaintext grpc:// location: fall back to plain Flight when the server's"
          + " answer to the data-plane offer is not signed with the secret (a Flight server without it, or"
          + " anyone on the path); false: such streams fail with UNAVAILABLE. Never with sluice.transport.encryption.",
      Parsers.bool());

  public static final ConfigKey<String> TLS_TRUSTED_CERTIFICATES = ConfigKey.of(
      "sluice.flight.tlsTrustedCertificates", "",
      "Client: PEM file of the certificates to trust for grpc+tls locations (a server's self-signed"
          + " certificate or its CA); empty: the JVM's default trust.",
      Parsers.string());

  /** Batches in flight per stream are capped here whatever {@link #STREAM_WINDOW} says. */
  public static final int MAX_STREAM_WINDOW = 1024;

  private static final List<ConfigKey<?>> ALL =
      List.of(STAGING_BYTES, STREAM_WINDOW, WINDOW_BYTES, ACK_TIMEOUT_MS, DATA_PLANE, ZERO_COPY, VERIFY_READS,
          READ_CHUNK_BYTES, REQUIRE_DATA_PLANE, PUTS, MAX_PUT_BYTES, STREAM_THREADS, STREAM_THREADS_PER_CLIENT,
          STREAM_THREADS_PER_HOST, DATA_PLANE_GETS, DATA_PLANE_GETS_PER_CLIENT, DATA_PLANE_GETS_PER_HOST,
          GRANTS_PER_CLIENT, GRANTS_PER_HOST, MAX_PUT_TOTAL_BYTES, MAX_PUT_TABLES,
          TOKEN_VALIDITY_MS, TOKEN_MAX_VALIDITY_MS, TOKEN_AUDIENCES, UNSIGNED_FALLBACK, TLS_TRUSTED_CERTIFICATES);

  private FlightOption() {}

  /** Every Flight key, in the order of the README's table. */
  public static List<ConfigKey<?>> all() {
    return ALL;
  }
}
