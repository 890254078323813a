package io.sluice.flight;

import io.sluice.flight.table.FlightTable;
import io.sluice.transport.TransportConfig;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A {@link SluiceFlightServer} on loopback serving one deterministic table as shards, for the
 * Python package's tests. Shard {@code k} is the flight {@code t.s<kk>}: {@code batchesOf(k)}
 * batches of {@code rows} rows whose ids are {@code k * 1_000_000 + row}, so a reader's ids say
 * which shard and row it saw. Columns: {@code id} int64, {@code x} float64 ({@code id / 4}),
 * {@code v} fixed_size_list&lt;float32&gt;[3] ({@code id % 1000 + j / 2}), {@code label} int32
 * ({@code id % 5}); none is null.
 *
 * <p>Prints, then serves until its standard input closes:
 *
 * <pre>
 * location grpc+tcp://127.0.0.1:PORT
 * token TOKEN                                       (CallToken.mint of the secret for this server, 1 hour)
 * shard t.s00 rows R batches B crc32 HEX            (one line per shard)
 * serving
 * </pre>
 *
 * It stops when its standard input ends or reads the line {@code stop}. Other lines it answers:
 *
 * <pre>
 * counts            -> counts grants G streams S      (the server's live grants and data-plane streams)
 * corrupt t.s02     -> corrupted t.s02                (flips a byte of the shard's last batch's ids,
 *                                                      in the server's registered memory)
 * </pre>
 *
 * The CRC-32 runs over each batch's columns in order, each as its values little-endian (the
 * fixed-size list as its items), so a reader that computes it over what it received proves it got
 * every byte. java -cp ... io.sluice.flight.ServeTestTable [SHARDS [ROWS [SECRET [PROVIDER [ENCRYPTION
 * [KEY=VALUE ...]]]]]] (PROVIDER tcp or shm, default tcp; ENCRYPTION true or false, default false:
 * whether the server's transport asks every connection for encryption; then any further server
 * settings, such as {@code sluice.flight.dataPlaneGetsPerClient=4}).
 */
public final class ServeTestTable {
  static final Schema SCHEMA = new Schema(List.of(
      Field.notNullable("id", new ArrowType.Int(64, true)),
      Field.notNullable("x", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
      new Field("v", FieldType.notNullable(new ArrowType.FixedSizeList(3)),
          List.of(Field.notNullable("item", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)))),
      Field.notNullable("label", new ArrowType.Int(32, true))));

  private ServeTestTable() {}

  /** Every third shard has two batches; the others one. */
  static int batchesOf(int k) {
    return k % 3 == 2 ? 2 : 1;
  }

  public static void main(String[] args) throws Exception {
    int shards = args.length > 0 ? Integer.parseInt(args[0]) : 7;
    int rows = args.length > 1 ? Integer.parseInt(args[1]) : 16;
    String secret = args.length > 2 ? args[2] : "python-test-secret";
    String provider = args.length > 3 ? args[3] : "tcp";
    String encryption = args.length > 4 ? args[4] : "false";
    Map<String, String> settings = new java.util.HashMap<>(Map.of(
        "sluice.transport.provider", provider,
        "sluice.transport.bindHost", "127.0.0.1",
        "sluice.transport.encryption", encryption,
        "sluice.transport.secret", secret));
    for (int i = 5; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("a setting is key=value, got " + args[i]);
      }
      settings.put(args[i].substring(0, eq), args[i].substring(eq + 1));
    }
    TransportConfig config = TransportConfig.of(settings);
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = SluiceFlightServer.builder(allocator, Location.forGrpcInsecure("127.0.0.1", 0))
             .config(config).start()) {
      System.out.println("location " + server.location().getUri());
      System.out.println("token " + CallToken.mint(secret, CallToken.audienceOf(server.location()),
          java.time.Duration.ofHours(1)));
      for (int k = 0; k < shards; k++) {
        String name = String.format("t.s%02d", k);
        CRC32 crc = new CRC32();
        server.publish(name, shard(allocator, k, rows, crc));
        System.out.printf("shard %s rows %d batches %d crc32 %08x%n", name, rows * batchesOf(k), batchesOf(k),
            crc.getValue());
      }
      System.out.println("serving");
      System.out.flush();
      // Serve until the test closes our standard input or writes "stop" (a child process the
      // test forked may hold the pipe open).
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      String line;
      while ((line = in.readLine()) != null && !line.equals("stop")) {
        if (line.equals("counts")) {
          System.out.println("counts grants " + server.activeGrants() + " streams " + server.activeDataPlaneStreams());
        } else if (line.startsWith("corrupt ")) {
          String name = line.substring("corrupt ".length());
          try (FlightTable table = server.published(name).orElseThrow()) {
            ArrowBuf ids = table.batches().get(table.batches().size() - 1).getBuffers().get(1); // [validity, values]
            ids.setByte(8, ids.getByte(8) ^ 0x40);
          }
          System.out.println("corrupted " + name);
        }
        System.out.flush();
      }
    }
  }

  private static FlightTable shard(BufferAllocator allocator, int k, int rows, CRC32 crc) {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator);
         FlightTable.Builder b = FlightTable.builder(SCHEMA, new DictionaryProvider.MapDictionaryProvider())) {
      for (int batch = 0; batch < batchesOf(k); batch++) {
        root.allocateNew();
        BigIntVector id = (BigIntVector) root.getVector("id");
        Float8Vector x = (Float8Vector) root.getVector("x");
        FixedSizeListVector v = (FixedSizeListVector) root.getVector("v");
        Float4Vector items = (Float4Vector) v.getDataVector();
        IntVector label = (IntVector) root.getVector("label");
        ByteBuffer ids = le(rows * 8);
        ByteBuffer xs = le(rows * 8);
        ByteBuffer vs = le(rows * 3 * 4);
        ByteBuffer labels = le(rows * 4);
        for (int i = 0; i < rows; i++) {
          long value = k * 1_000_000L + (long) batch * rows + i;
          id.setSafe(i, value);
          ids.putLong(value);
          x.setSafe(i, value * 0.25);
          xs.putDouble(value * 0.25);
          v.setNotNull(i);
          for (int j = 0; j < 3; j++) {
            float f = value % 1000 + j * 0.5f;
            items.setSafe(i * 3 + j, f);
            vs.putFloat(f);
          }
          label.setSafe(i, (int) (value % 5));
          labels.putInt((int) (value % 5));
        }
        root.setRowCount(rows);
        b.add(root);
        for (ByteBuffer column : List.of(ids, xs, vs, labels)) {
          crc.update(column.flip());
        }
      }
      return b.build();
    }
  }

  private static ByteBuffer le(int bytes) {
    return ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
  }
}
