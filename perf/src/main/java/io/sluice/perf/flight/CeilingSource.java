package io.sluice.perf.flight;

import io.sluice.flight.protocol.IpcBodies;
import io.sluice.flight.table.FlightTable;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportException;
import io.sluice.transport.Transports;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * The serving side of the transport ceiling, in the benchmark server's JVM: a transport of its
 * own over one provider, with the table's batch bodies copied (once, before any round) into
 * regions every authenticated peer may READ, laid one after another at 8-byte boundaries in
 * segments of at most {@value #SEGMENT_BYTES} bytes. To bound the server's memory only the first
 * bodies up to {@link #MAX_BYTES} are copied (at least one); the driver READs them body by body
 * as the Flight paths do, in as many passes as the table needs, so the ceiling moves as many
 * bytes in the same pieces without Flight.
 *
 * <p>Thread safe once built; closing frees the regions and the transport.
 */
final class CeilingSource implements AutoCloseable {
  static final int SEGMENT_BYTES = 1 << 30;
  /** The source holds the table's first bodies up to this many bytes; the driver READs them in passes. */
  static final long MAX_BYTES = 512L << 20;

  private final Transport transport;
  private final List<RegisteredRegion> regions = new ArrayList<>();
  private final List<ServerAnnouncement.Segment> segments = new ArrayList<>();
  private final long checksum;

  private CeilingSource(Transport transport, FlightTable table) throws TransportException {
    this.transport = transport;
    BodySum sum = new BodySum();
    List<Long> lengths = new ArrayList<>();
    RegisteredRegion current = null;
    long offset = 0;
    long left = 0;
    List<ArrowRecordBatch> held = new ArrayList<>();
    for (ArrowRecordBatch batch : table.batches()) {
      if (!held.isEmpty() && left + align(IpcBodies.bodyLength(batch)) > MAX_BYTES) {
        break;
      }
      held.add(batch);
      left += align(IpcBodies.bodyLength(batch));
    }
    for (ArrowRecordBatch batch : held) {
      long length = IpcBodies.bodyLength(batch);
      if (current == null || offset + length > current.length()) {
        if (current != null) {
          segments.add(new ServerAnnouncement.Segment(current.descriptor(), lengths));
          lengths = new ArrayList<>();
        }
        current = transport.allocate((int) Math.max(Math.min(SEGMENT_BYTES, left), align(length)));
        regions.add(current);
        offset = 0;
      }
      ByteBuffer at = current.buffer().position((int) offset).limit((int) (offset + length)).slice();
      IpcBodies.writeBody(batch, at);
      sum.addRange(at.flip());
      lengths.add(length);
      offset += align(length);
      left -= align(length);
    }
    if (current != null) {
      segments.add(new ServerAnnouncement.Segment(current.descriptor(), lengths));
    }
    this.checksum = sum.value().checksum();
  }

  /** Opens a transport over {@code provider} and copies {@code table}'s bodies into its regions. */
  static CeilingSource open(String provider, String secret, FlightTable table) throws TransportException {
    Transport t = Transports.open(LoopbackFlight.config(provider, secret), MessageHandler.REJECT_ALL);
    try {
      return new CeilingSource(t, table);
    } catch (TransportException | RuntimeException e) {
      t.close();
      throw e;
    }
  }

  static long align(long length) {
    return (length + 7) & ~7L;
  }

  /** What the driver needs: where to connect, the segments, and the sum of the bodies' bytes. */
  ServerAnnouncement.Ceiling offer() {
    return new ServerAnnouncement.Ceiling(transport.localAddress(), segments, checksum);
  }

  @Override
  public void close() {
    regions.forEach(RegisteredRegion::close);
    transport.close();
  }
}
