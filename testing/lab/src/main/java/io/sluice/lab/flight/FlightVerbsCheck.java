package io.sluice.lab.flight;

import io.sluice.flight.SluiceFlightClient;
import io.sluice.flight.SluiceFlightServer;
import io.sluice.flight.TableReader;
import io.sluice.flight.TableWriter;
import io.sluice.transport.TransportConfig;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Arrow Flight over verbs in the SoftRoCE lab, through the public entry points only: a
 * {@link SluiceFlightServer} and a {@link SluiceFlightClient} with the verbs provider on the
 * device's address. The client puts a table over the data plane (the server READs the
 * batches' bodies), then reads it back over the data plane and with a plain DoGet; the rows of
 * all three must be equal and both data-plane streams must say {@code verbs}. Then a byte of the
 * served table is changed in the server's registered memory, and a read over verbs must fail with
 * the {@link io.sluice.transport.ReadIntegrityException} that names it.
 *
 * <pre>
 *   FlightVerbsCheck ADDRESS [BATCHES [ROWS_PER_BATCH]]
 * </pre>
 *
 * Prints {@code FLIGHT-VERBS} lines; exit status 0 when everything held, 1 otherwise.
 */
public final class FlightVerbsCheck {
  private static final String SECRET = "flight-verbs-lab";

  private FlightVerbsCheck() {}

  public static void main(String[] args) {
    if (args.length < 1 || args.length > 3) {
      System.err.println("usage: FlightVerbsCheck ADDRESS [BATCHES [ROWS_PER_BATCH]]");
      System.exit(2);
    }
    int batches = args.length > 1 ? Integer.parseInt(args[1]) : 4;
    int rows = args.length > 2 ? Integer.parseInt(args[2]) : 5000;
    int status;
    try {
      status = run(args[0], batches, rows);
    } catch (RuntimeException | java.io.IOException e) {
      e.printStackTrace(System.out);
      System.out.println("FLIGHT-VERBS FAIL: " + e);
      status = 1;
    }
    System.exit(status);
  }

  static Schema schema() {
    return new Schema(List.of(
        Field.nullable("id", new ArrowType.Int(64, true)),
        Field.nullable("name", ArrowType.Utf8.INSTANCE),
        Field.nullable("value", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE))));
  }

  /** Fills {@code root} with batch {@code b}: some nulls, strings of varying length. */
  static void fill(VectorSchemaRoot root, int b, int rows) {
    root.allocateNew();
    BigIntVector id = (BigIntVector) root.getVector("id");
    VarCharVector name = (VarCharVector) root.getVector("name");
    Float8Vector value = (Float8Vector) root.getVector("value");
    for (int i = 0; i < rows; i++) {
      long n = (long) b * rows + i;
      id.setSafe(i, n);
      if (n % 11 == 0) {
        name.setNull(i);
      } else {
        name.setSafe(i, ("row-" + n + "-" + "x".repeat((int) (n % 37))).getBytes(StandardCharsets.UTF_8));
      }
      value.setSafe(i, n * 0.5 - 3);
    }
    root.setRowCount(rows);
  }

  static int run(String address, int batches, int rows) throws java.io.IOException {
    TransportConfig config = TransportConfig.of(Map.of(
        "sluice.transport.secret", SECRET,
        "sluice.transport.provider", "verbs",
        "sluice.transport.bindHost", address,
        "sluice.transport.advertiseHost", address,
        "sluice.flight.puts", "true",
        // Emulated guest: a minute to connect and authenticate (defaults 10 s and 3 s).
        "sluice.transport.connectTimeoutMs", "60000",
        "sluice.transport.handshakeTimeoutMs", "60000"));
    StringBuilder put = new StringBuilder();
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = SluiceFlightServer.builder(allocator, Location.forGrpcInsecure(address, 0))
             .config(config).start();
         SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(), config)) {
      Optional<String> plane = server.dataPlane();
      System.out.println("FLIGHT-VERBS server data plane " + plane.orElse("none") + " at "
          + server.dataPlaneAddress().map(Object::toString).orElse("-") + "; client: " + client.dataPlane()
          + client.fallbackReason().map(r -> " (" + r + ")").orElse(""));
      List<String> failures = new ArrayList<>();
      if (!"verbs".equals(client.dataPlane())) {
        failures.add("the client's data plane is " + client.dataPlane() + ", not verbs");
      }
      try (VectorSchemaRoot root = VectorSchemaRoot.create(schema(), allocator);
           TableWriter writer = client.startPut(FlightDescriptor.path("lab"), root,
               new DictionaryProvider.MapDictionaryProvider())) {
        for (int b = 0; b < batches; b++) {
          fill(root, b, rows);
          put.append(root.contentToTSVString());
          writer.putNext();
        }
        writer.completed();
        System.out.println("FLIGHT-VERBS put " + batches + " x " + rows + " rows over " + writer.dataPath());
        if (!"verbs".equals(writer.dataPath())) {
          failures.add("the put went over " + writer.dataPath() + ", not verbs");
        }
      }
      String viaVerbs;
      try (TableReader reader = client.getStream(SluiceFlightServer.ticket("lab"))) {
        StringBuilder rendered = new StringBuilder();
        while (reader.next()) {
          rendered.append(reader.getRoot().contentToTSVString());
        }
        viaVerbs = rendered.toString();
        System.out.println("FLIGHT-VERBS read " + viaVerbs.lines().count() + " lines over " + reader.dataPath());
        if (!"verbs".equals(reader.dataPath())) {
          failures.add("the read went over " + reader.dataPath() + ", not verbs");
        }
      }
      String viaDoGet;
      try (FlightStream plain = client.flight().getStream(SluiceFlightServer.ticket("lab"))) {
        StringBuilder rendered = new StringBuilder();
        while (plain.next()) {
          rendered.append(plain.getRoot().contentToTSVString());
        }
        viaDoGet = rendered.toString();
      } catch (Exception e) {
        throw new IllegalStateException("the plain DoGet failed", e);
      }
      if (!viaVerbs.equals(viaDoGet)) {
        failures.add("rows read over verbs differ from a plain DoGet's");
      }
      if (!viaDoGet.equals(put.toString())) {
        failures.add("rows of a plain DoGet differ from the rows put");
      }
      // A byte of the served table changes under the server, as a corrupting device or a stray
      // write would change it: a READ over verbs brings the changed bytes, and the reader must
      // refuse them (CRC32C against the server's), never hand them on.
      if (batches > 1) {
        io.sluice.flight.LabTables.flipAByte(server, "lab", 1);
        try (TableReader reader = client.getStream(SluiceFlightServer.ticket("lab"))) {
          int seen = 0;
          while (reader.next()) {
            seen++;
          }
          failures.add("a READ over verbs of a changed body was handed on (" + seen + " batches)");
        } catch (RuntimeException e) {
          Optional<io.sluice.transport.ReadIntegrityException> corrupt = integrityCause(e);
          if (corrupt.isPresent()) {
            System.out.println("FLIGHT-VERBS changed body refused: " + corrupt.get().getMessage());
          } else {
            failures.add("a READ of a changed body failed without naming the corruption: " + e);
          }
        }
      }
      if (failures.isEmpty()) {
        System.out.println("FLIGHT-VERBS PASS: " + batches * rows + " rows put and read over verbs equal a plain DoGet;"
            + " a changed body READ over verbs is refused");
        return 0;
      }
      failures.forEach(f -> System.out.println("FLIGHT-VERBS FAIL: " + f));
      return 1;
    }
  }

  private static Optional<io.sluice.transport.ReadIntegrityException> integrityCause(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof io.sluice.transport.ReadIntegrityException r) {
        return Optional.of(r);
      }
    }
    return Optional.empty();
  }
}
