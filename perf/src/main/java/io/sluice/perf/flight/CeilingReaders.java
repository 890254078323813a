package io.sluice.perf.flight;

import io.sluice.flight.FlightOption;
import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.Transports;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The driver's side of the transport ceilings: per provider a transport of its own connected to
 * the server's {@link CeilingSource}, READing with the depth and range size the Flight reader
 * uses ({@code sluice.flight.streamWindow}, {@code sluice.flight.readChunkBytes}), checking that
 * each pass saw the bytes the server laid out. Not thread safe; closing closes the transports.
 */
final class CeilingReaders implements AutoCloseable {
  private final Map<String, ServerAnnouncement.Ceiling> offers = new LinkedHashMap<>();
  private final Map<String, Transport> transports = new LinkedHashMap<>();
  private final Map<String, Connection> connections = new LinkedHashMap<>();
  private final int depth;
  private final int chunkBytes;

  private CeilingReaders(int depth, int chunkBytes) {
    this.depth = depth;
    this.chunkBytes = chunkBytes;
  }

  static CeilingReaders open(ServerAnnouncement a, List<String> providers, String secret) throws IOException {
    TransportConfig config = LoopbackFlight.config(providers.get(0), secret);
    CeilingReaders r = new CeilingReaders(
        (int) Math.min(FlightOption.MAX_STREAM_WINDOW, config.value(FlightOption.STREAM_WINDOW)),
        (int) Math.min(Integer.MAX_VALUE, config.value(FlightOption.READ_CHUNK_BYTES)));
    try {
      for (String p : providers) {
        ServerAnnouncement.Ceiling c = a.ceiling(p);
        r.offers.put(p, c);
        Transport t = Transports.open(LoopbackFlight.config(p, secret), MessageHandler.REJECT_ALL);
        r.transports.put(p, t);
        Connection conn = t.connect(c.address()).get(30, TimeUnit.SECONDS);
        r.connections.put(p, conn);
        if (!conn.dataPath().equals(p)) {
          throw new IOException("the " + p + " ceiling connection READs over " + conn.dataPath());
        }
      }
      return r;
    } catch (ExecutionException | TimeoutException | IOException | RuntimeException e) {
      r.close();
      throw new IOException("the transport ceiling could not connect: " + e.getMessage(), e);
    } catch (InterruptedException e) {
      r.close();
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while connecting the transport ceiling", e);
    }
  }

  /**
   * READs the source's bodies over {@code provider}'s transport, checked, in as many passes as
   * it takes to move at least {@code tableBytes}.
   */
  FlightBench.MovedBytes read(String provider, long tableBytes) throws IOException {
    ServerAnnouncement.Ceiling c = offers.get(provider);
    int passes = (int) Math.max(1, (tableBytes + c.bodyBytes() - 1) / c.bodyBytes());
    FlightPaths.Timed t = Ceilings.transportRead(transports.get(provider), connections.get(provider), c, passes,
        depth, chunkBytes);
    for (BodySum.Value seen : t.seen()) {
      check(c, seen, t.dataPath());
    }
    return new FlightBench.MovedBytes(t, passes * c.bodyBytes());
  }

  /** Fails unless {@code seen} is the sum of the first {@code batches} bodies the server laid out. */
  static void check(ServerAnnouncement.Ceiling c, BodySum.Value seen, String path) {
    long batches = c.segments().stream().mapToLong(s -> s.bodyLengths().size()).sum();
    if (seen.checksum() != c.checksum() || seen.batches() != batches) {
      throw new IllegalStateException("the " + path + " ceiling summed " + seen + "; the server's bodies sum to "
          + Long.toHexString(c.checksum()) + " in " + batches + " bodies");
    }
  }

  @Override
  public void close() {
    connections.values().forEach(Connection::close);
    transports.values().forEach(Transport::close);
  }
}
