package io.sluice.spark.tables;

import io.sluice.flight.SluiceFlightClient;
import io.sluice.flight.TableReader;
import io.sluice.transport.Eventually;
import io.sluice.transport.TransportConfig;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flight.CallOptions;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.SparkSession;

/** local-cluster sessions for the tables' tests, and a reader that finds a table through the catalog. */
final class TableClusters {
  private TableClusters() {}

  static SparkConf conf(String app) {
    return new SparkConf()
        .setMaster("local-cluster[2,1,1024]")
        .setAppName(app)
        .set("spark.home", System.getProperty("sluice.test.sparkHome"))
        .set("spark.executor.extraClassPath", System.getProperty("sluice.test.executorClassPath"))
        .set("spark.executor.extraJavaOptions", "--add-opens=java.base/java.nio=ALL-UNNAMED")
        .set("spark.executor.memory", "768m")
        .set("spark.ui.enabled", "false")
        .set("spark.driver.host", "127.0.0.1")
        .set("spark.driver.bindAddress", "127.0.0.1")
        .set("spark.sluice.tables.transport.bindHost", "127.0.0.1");
  }

  static SparkSession start(SparkConf conf, int executors) {
    SparkSession spark = SparkSession.builder().config(conf).getOrCreate();
    Eventually.matches(executors + " executors registered (logs: " + System.getProperty("sluice.test.sparkHome")
        + "/work)", Duration.ofSeconds(120), () -> spark.sparkContext().getExecutorIds().size(), n -> n >= executors);
    return spark;
  }

  /** The keys a reader on the driver uses: the tables' secret, the data plane on or off. */
  static TransportConfig readerConfig(String secret, boolean dataPlane) {
    return TransportConfig.of(readerKeys(secret, dataPlane));
  }

  static Map<String, String> readerKeys(String secret, boolean dataPlane) {
    Map<String, String> keys = new HashMap<>();
    keys.put("sluice.transport.secret", secret);
    keys.put("sluice.transport.bindHost", "127.0.0.1");
    keys.put("sluice.flight.dataPlane", Boolean.toString(dataPlane));
    return keys;
  }

  /** What a read of a whole table gave: each row rendered by {@code render}, and the paths the bodies took. */
  record Read(List<String> rows, List<String> paths) {}

  interface Render {
    void rows(VectorSchemaRoot root, List<String> out);
  }

  /** GetFlightInfo(name) at the catalog, then every endpoint at its executor: a Flight client's whole read. */
  static Read read(String catalog, String name, TransportConfig config, Render render) throws URISyntaxException {
    List<String> rows = new ArrayList<>();
    List<String> paths = new ArrayList<>();
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightClient c = SluiceFlightClient.connect(allocator, new Location(catalog), config)) {
      FlightInfo info = c.flight().getInfo(FlightDescriptor.path(name), CallOptions.timeout(30, java.util.concurrent.TimeUnit.SECONDS));
      Map<String, SluiceFlightClient> clients = new HashMap<>();
      try {
        for (FlightEndpoint e : info.getEndpoints()) {
          Location at = e.getLocations().get(0);
          SluiceFlightClient client = clients.computeIfAbsent(at.getUri().toString(),
              u -> SluiceFlightClient.connect(allocator, at, config));
          try (TableReader r = client.getStream(e.getTicket())) {
            while (r.next()) {
              render.rows(r.getRoot(), rows);
            }
            paths.add(r.dataPath());
          }
        }
      } finally {
        clients.values().forEach(SluiceFlightClient::close);
      }
    }
    return new Read(rows, paths);
  }

  /** Each row as its columns' values, tab-separated (Arrow's getObject). */
  static void tsv(VectorSchemaRoot root, List<String> out) {
    for (int i = 0; i < root.getRowCount(); i++) {
      StringBuilder b = new StringBuilder();
      for (FieldVector v : root.getFieldVectors()) {
        if (b.length() > 0) {
          b.append('\t');
        }
        b.append(v.getObject(i));
      }
      out.add(b.toString());
    }
  }
}
