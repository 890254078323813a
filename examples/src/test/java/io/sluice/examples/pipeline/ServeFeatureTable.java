package io.sluice.examples.pipeline;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A test program for the Python trainer's tests: serves a small feature table (the pipeline's
 * schema, rows drawn from a fixed seed, so two runs serve the same rows) from this JVM's
 * {@link ExecutorFlight}, writes {@code RUN_DIR/endpoints.properties} as the driver does, prints
 * {@code serving} and serves until a line {@code stop} (or the end of stdin).
 *
 * <pre>java -cp ... io.sluice.examples.pipeline.ServeFeatureTable RUN_DIR SHARDS ROWS_PER_SHARD WIDTH SECRET|-</pre>
 *
 * <p>{@code -} serves without a secret: plain Flight, as the {@code flight-grpc} configuration.
 */
public final class ServeFeatureTable {
  private ServeFeatureTable() {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    int shards = Integer.parseInt(args[1]);
    int rows = Integer.parseInt(args[2]);
    int width = Integer.parseInt(args[3]);
    String secret = args[4].equals("-") ? "" : args[4];
    ExecutorFlight flight = ExecutorFlight.get("127.0.0.1", secret);
    Schema schema = FeaturePublisher.schema(width);
    SplittableRandom random = new SplittableRandom(29);
    long bytes = 0;
    for (int s = 0; s < shards; s++) {
      try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, flight.allocator())) {
        fill(root, random, s * (long) rows, rows, width);
        for (var v : root.getFieldVectors()) {
          bytes += v.getBufferSize();
        }
        flight.publish(FeaturePublisher.shardName(FeaturePipeline.TABLE, s % 2, s), schema, root);
      }
    }
    PublishedTable.of(FeaturePipeline.TABLE, secret, List.of(flight.location()), (long) shards * rows, width, shards,
        bytes, System.currentTimeMillis()).write(dir);
    System.out.println("location " + flight.location());
    System.out.println("data-plane " + flight.dataPlane());
    System.out.println("serving");
    System.out.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line = in.readLine(); line != null && !line.equals("stop"); line = in.readLine()) {
      System.out.println("unknown command " + line);
    }
    System.exit(0); // the shutdown hook closes the server
  }

  private static void fill(VectorSchemaRoot root, SplittableRandom random, long firstUser, int rows, int width) {
    root.allocateNew();
    FixedSizeListVector dense = (FixedSizeListVector) root.getVector(width + 2);
    Float4Vector values = (Float4Vector) dense.getDataVector();
    for (int r = 0; r < rows; r++) {
      double signal = random.nextGaussian();
      ((BigIntVector) root.getVector(0)).setSafe(r, firstUser + r);
      ((Float8Vector) root.getVector(1)).setSafe(r, signal + 0.3 * random.nextGaussian() > 0 ? 1.0 : 0.0);
      for (int i = 0; i < width; i++) {
        ((Float8Vector) root.getVector(i + 2)).setSafe(r, i == 0 ? signal : random.nextGaussian());
      }
      int at = dense.startNewValue(r);
      for (int d = 0; d < HistoryEmbedding.DIMS; d++) {
        values.setSafe(at + d, (float) random.nextGaussian());
      }
    }
    root.setRowCount(rows);
  }
}
