package io.sluice.flight.loader;

import io.sluice.transport.TransportConfig;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Reads one epoch of one rank with a real {@link FlightLoader} and prints what it delivered, for
 * the Python package's tests to compare with {@code sluice.torch.SluiceDataset}: one line per
 * shard, {@code NAME DATAPATH ID ID ...} (the {@code id} column, in delivery order).
 *
 * <pre>
 * java -cp ... io.sluice.flight.loader.PrintLoaderRows LOCATION SECRET PREFIX SEED EPOCH RANK WORLD
 * </pre>
 *
 * With a secret the loader takes the data plane (tcp), so the comparison also spans the paths.
 */
public final class PrintLoaderRows {
  private PrintLoaderRows() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 7) {
      throw new IllegalArgumentException("usage: LOCATION SECRET PREFIX SEED EPOCH RANK WORLD");
    }
    TransportConfig config = TransportConfig.of(Map.of(
        "sluice.transport.provider", "tcp",
        "sluice.transport.bindHost", "127.0.0.1",
        "sluice.transport.secret", args[1]));
    int epoch = Integer.parseInt(args[4]);
    try (BufferAllocator allocator = new RootAllocator()) {
      List<Shard> shards = Shards.list(allocator, List.of(new Location(args[0])), args[2], Duration.ofSeconds(30),
          config);
      try (FlightLoader loader = FlightLoader.builder(allocator, shards).seed(Long.parseLong(args[3]))
          .rank(Integer.parseInt(args[5]), Integer.parseInt(args[6])).epochs(epoch + 1)
          .resumeFrom(new Cursor(epoch, 0)).config(config).build()) {
        Optional<LoadedShard> next;
        while ((next = loader.next(Duration.ofSeconds(60))).isPresent()) {
          try (LoadedShard s = next.get()) {
            StringBuilder line = new StringBuilder(s.shard().name()).append(' ').append(s.dataPath());
            for (VectorSchemaRoot batch : s.batches()) {
              BigIntVector id = (BigIntVector) batch.getVector("id");
              for (int i = 0; i < batch.getRowCount(); i++) {
                line.append(' ').append(id.get(i));
              }
            }
            System.out.println(line);
          }
        }
      }
    }
  }
}
