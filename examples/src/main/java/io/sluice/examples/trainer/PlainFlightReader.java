package io.sluice.examples.trainer;

import io.sluice.flight.CallToken;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * The second consumer: flight-core's own {@code FlightClient}, knowing nothing of Sluice and
 * holding no secret, reads the whole published table from the catalog's URI and the table's name:
 * GetFlightInfo at the catalog (presenting a catalog token), then DoGet of every endpoint at its
 * executor, presenting the token the catalog handed out with that endpoint (its app metadata) the
 * standard way, as {@code Authorization: Bearer <token>} (pyarrow: {@code
 * FlightCallOptions(headers=[(b"authorization", b"Bearer " + token)])}). Its digest must equal the
 * trainer's: the table reaches a standard Flight client unchanged.
 *
 * <pre>
 * java -cp ... io.sluice.examples.trainer.PlainFlightReader --run-dir DIR
 * </pre>
 *
 * Takes the catalog token the driver wrote to {@code DIR/driver.properties}; writes {@code
 * DIR/plain.properties}. Single-threaded.
 */
public final class PlainFlightReader {
  private PlainFlightReader() {}

  /** Reads every shard of {@code table} with plain Flight into {@code digest}, presenting {@code catalogToken} to the catalog. */
  public static void read(CatalogTable table, CallOption catalogToken, TableDigest digest)
      throws InterruptedException {
    try (BufferAllocator allocator = new RootAllocator()) {
      CatalogTable.Listing listing = table.list(allocator, catalogToken);
      Map<String, FlightClient> clients = new HashMap<>();
      try {
        for (var shard : listing.shards()) {
          String at = shard.location().getUri().toString();
          FlightClient client = clients.computeIfAbsent(at, u -> FlightClient.builder(allocator, shard.location()).build());
          FlightStream stream = client.getStream(shard.ticket(), listing.auth(at));
          try {
            while (stream.next()) {
              digest.add(stream.getRoot());
            }
          } finally {
            close(stream);
          }
        }
      } finally {
        for (FlightClient c : clients.values()) {
          c.close();
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
    CatalogTable table = CatalogTable.read(dir);
    String token = CatalogTable.driverProperties(dir).getProperty("catalogToken");
    TableDigest digest = new TableDigest();
    long start = System.nanoTime();
    read(table, CallToken.callOption(token), digest);
    System.out.printf("[plain-flight] flight-core FlightClient read %,d rows of table '%s' at %s in %.1f s,"
        + " digest %s%n", digest.rows(), table.name(), table.catalog(), (System.nanoTime() - start) / 1e9,
        digest.value());
    Properties p = new Properties();
    p.setProperty("rows", Long.toString(digest.rows()));
    p.setProperty("digest", digest.value());
    try (Writer w = Files.newBufferedWriter(dir.resolve("plain.properties"))) {
      p.store(w, "flight-core FlightClient");
    }
  }
}
