package io.sluice.examples.trainer;

import io.sluice.examples.pipeline.PublishedTable;
import io.sluice.flight.CallToken;
import java.io.Writer;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.Criteria;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * The second consumer: flight-core's own {@code FlightClient}, knowing nothing of Sluice but the call
 * token, lists each executor's flights and reads every shard of the table (flights named {@code
 * table.*}) with DoGet. Its digest must equal the trainer's: the table reaches a standard Flight
 * client unchanged. The executors' servers have a secret, so every call presents the token the
 * driver minted for that executor (in {@code endpoints.properties}) the standard way, as the call option that sends {@code Authorization: Bearer <token>}
 * (pyarrow: {@code FlightCallOptions(headers=[(b"authorization", b"Bearer " + token)])}).
 *
 * <pre>
 * java -cp ... io.sluice.examples.trainer.PlainFlightReader --run-dir DIR
 * </pre>
 *
 * Writes {@code DIR/plain.properties}. Single-threaded.
 */
public final class PlainFlightReader {
  private PlainFlightReader() {}

  /** Reads every endpoint's table with plain Flight into {@code digest}. */
  public static void read(PublishedTable table, TableDigest digest) throws InterruptedException {
    try (BufferAllocator allocator = new RootAllocator()) {
      for (String uri : table.locations()) {
        CallOption[] auth = table.callToken(uri).map(t -> new CallOption[] {CallToken.callOption(t)})
            .orElse(new CallOption[0]);
        try (FlightClient client = FlightClient.builder(allocator, new Location(URI.create(uri))).build()) {
          for (FlightInfo info : client.listFlights(Criteria.ALL, auth)) {
            if (info.getDescriptor().isCommand()
                || !info.getDescriptor().getPath().get(0).startsWith(table.shardPrefix())) {
              continue;
            }
            FlightEndpoint endpoint = info.getEndpoints().get(0);
            FlightStream stream = client.getStream(endpoint.getTicket(), auth);
            try {
              while (stream.next()) {
                digest.add(stream.getRoot());
              }
            } finally {
              close(stream);
            }
          }
        }
      }
    }
  }

  private static void close(FlightStream stream) {
    try {
      stream.close();
    } catch (Exception e) {
      throw new IllegalStateException("closing a Flight stream failed", e);
    }
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 2 || !args[0].equals("--run-dir")) {
      throw new IllegalArgumentException("usage: --run-dir DIR");
    }
    Path dir = Path.of(args[1]);
    PublishedTable table = PublishedTable.read(dir);
    TableDigest digest = new TableDigest();
    long start = System.nanoTime();
    read(table, digest);
    System.out.printf("[plain-flight] flight-core FlightClient read %,d rows from %d endpoints in %.1f s,"
        + " digest %s%n", digest.rows(), table.locations().size(), (System.nanoTime() - start) / 1e9, digest.value());
    Properties p = new Properties();
    p.setProperty("rows", Long.toString(digest.rows()));
    p.setProperty("digest", digest.value());
    try (Writer w = Files.newBufferedWriter(dir.resolve("plain.properties"))) {
      p.store(w, "flight-core FlightClient");
    }
  }
}
