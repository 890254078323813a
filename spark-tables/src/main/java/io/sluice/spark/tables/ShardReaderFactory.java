package io.sluice.spark.tables;

import io.sluice.flight.FlightOption;
import io.sluice.flight.SluiceFlightClient;
import io.sluice.flight.SluiceFlightServer;
import io.sluice.flight.TableReader;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.config.TransportKeys;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Reads a published table's shards in a task: one client of the executor server that holds them
 * (over its READ data plane, with the tables' secret), each Arrow batch handed to Spark as a
 * columnar batch over the same vectors, without a copy. Serializable, immutable.
 */
final class ShardReaderFactory implements PartitionReaderFactory {
  private static final long serialVersionUID = 1L;
  private final Map<String, String> transportKeys;
  private final String shippedSecret;
  private final String trustedCertificates;

  ShardReaderFactory(Map<String, String> transportKeys, String shippedSecret, String trustedCertificates) {
    this.transportKeys = Map.copyOf(transportKeys);
    this.shippedSecret = shippedSecret;
    this.trustedCertificates = trustedCertificates;
  }

  /** The shards of one source partition on one executor. */
  record Partition(String location, List<String> flights) implements InputPartition {
    @Override
    public String[] preferredLocations() {
      try {
        return new String[] {new URI(location).getHost()};
      } catch (URISyntaxException e) {
        return new String[0];
      }
    }
  }

  @Override
  public String toString() {
    return "ShardReaderFactory[secret=<hidden>]";
  }

  @Override
  public boolean supportColumnarReads(InputPartition partition) {
    return true;
  }

  @Override
  public PartitionReader<InternalRow> createReader(InputPartition partition) {
    throw new UnsupportedOperationException("published tables are read in columnar batches");
  }

  @Override
  public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
    Partition p = (Partition) partition;
    Map<String, String> keys = new HashMap<>(transportKeys);
    keys.put(TransportKeys.SECRET.key(), TablesSecret.onExecutor(shippedSecret));
    if (trustedCertificates != null) {
      keys.putIfAbsent(FlightOption.TLS_TRUSTED_CERTIFICATES.key(), trustedCertificates);
    }
    BufferAllocator allocator = new RootAllocator();
    SluiceFlightClient client;
    try {
      client = SluiceFlightClient.connect(allocator, new Location(p.location()), TransportConfig.of(keys));
    } catch (URISyntaxException | RuntimeException e) {
      allocator.close();
      throw new TableException("cannot reach the server at " + p.location() + ": " + e.getMessage(), e);
    }
    return new PartitionReader<>() {
      private int next;
      private TableReader stream;
      private ColumnarBatch batch;

      @Override
      public boolean next() {
        while (true) {
          if (stream == null) {
            if (next == p.flights().size()) {
              return false;
            }
            stream = client.getStream(SluiceFlightServer.ticket(p.flights().get(next++)));
          }
          if (stream.next()) {
            VectorSchemaRoot root = stream.getRoot();
            List<FieldVector> vectors = root.getFieldVectors();
            ColumnVector[] columns = new ColumnVector[vectors.size()];
            for (int i = 0; i < columns.length; i++) {
              columns[i] = new ArrowColumnVector(vectors.get(i));
            }
            batch = new ColumnarBatch(columns, root.getRowCount());
            return true;
          }
          stream.close();
          stream = null;
        }
      }

      @Override
      public ColumnarBatch get() {
        return batch;
      }

      @Override
      public void close() {
        try {
          if (stream != null) {
            stream.close();
          }
        } finally {
          client.close();
          allocator.close();
        }
      }
    };
  }
}
