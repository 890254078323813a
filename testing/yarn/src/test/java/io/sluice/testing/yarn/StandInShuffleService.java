package io.sluice.testing.yarn;

import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.jmx.JmxReporter;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.server.api.ApplicationInitializationContext;
import org.apache.hadoop.yarn.server.api.ApplicationTerminationContext;
import org.apache.hadoop.yarn.server.api.AuxiliaryService;
import org.apache.spark.network.TransportContext;
import org.apache.spark.network.server.TransportServer;
import org.apache.spark.network.shuffle.ExternalBlockHandler;
import org.apache.spark.network.util.MapConfigProvider;
import org.apache.spark.network.util.TransportConf;

/**
 * A NodeManager auxiliary service that serves Spark's shuffle files the way Spark's own
 * {@code org.apache.spark.network.yarn.YarnShuffleService} does, for this module's tests only:
 * the artifact holding that class ({@code spark-network-yarn}) is not served by the registry
 * this project builds from, at any version.
 *
 * <p>What it is: spark-network-shuffle's {@link ExternalBlockHandler} behind a
 * {@link TransportServer}, the same two objects YarnShuffleService builds, so executors speak the
 * same protocol to it (they register their local dirs with {@code RegisterExecutor}, readers fetch
 * with {@code FetchShuffleBlocks}), and the same life cycle: the server starts with the
 * NodeManager, an application's registered executors are forgotten when YARN stops the
 * application (its files are YARN's to delete). It listens on {@code spark.shuffle.service.port}
 * of the NodeManager's configuration (0: any free port); other {@code spark.*} keys there reach
 * the handler's {@link TransportConf}, as in YarnShuffleService.
 *
 * <p>What it does not cover, unlike YarnShuffleService: SASL authentication of executors
 * ({@code spark.authenticate}, the per-application secrets YARN hands the service), the recovery
 * database that lets a restarted NodeManager remember registered executors, push-based shuffle
 * merging, the NodeManager metrics source, and loading from an isolated class loader
 * ({@code yarn.nodemanager.aux-services.spark_shuffle.classpath}). What it proves is the shuffle
 * manager's side: RdmaShuffleManager on YARN with dynamic allocation and the external shuffle
 * protocol, not the packaging of Spark's jar.
 *
 * <p>Two differences made for tests: {@link #getMetaData} returns the port it listens on (four
 * bytes, big-endian; YARN's MapReduce ShuffleHandler does the same), so a test that asked for port
 * 0 learns the real one from the NodeManager; and the handler's metrics are published over JMX
 * in the domain {@value #JMX_DOMAIN} (e.g. the meter {@code name=blockTransferRateBytes}), so a
 * test can see what the service served.
 *
 * <p>The NodeManager creates, starts and stops it; its calls come from the NodeManager's threads
 * and the server's from Netty's.
 */
public final class StandInShuffleService extends AuxiliaryService {
  /** The service name executors find it by: Spark's default {@code spark.shuffle.service.name}. */
  public static final String NAME = "spark_shuffle";
  /** Where the block handler's metrics appear in the platform MBean server. */
  public static final String JMX_DOMAIN = "sluice.standInShuffleService";
  private static final String PORT_KEY = "spark.shuffle.service.port";
  private static final int DEFAULT_PORT = 7337;

  private TransportContext context;
  private ExternalBlockHandler handler;
  private TransportServer server;
  private JmxReporter jmx;

  public StandInShuffleService() {
    super(NAME);
  }

  @Override
  protected void serviceInit(Configuration conf) throws Exception {
    Map<String, String> spark = new HashMap<>();
    for (Map.Entry<String, String> e : conf) {
      if (e.getKey().startsWith("spark.")) {
        spark.put(e.getKey(), e.getValue());
      }
    }
    TransportConf transportConf = new TransportConf("shuffle", new MapConfigProvider(spark));
    // No registered-executors file: nothing survives a NodeManager restart (no recovery).
    handler = new ExternalBlockHandler(transportConf, null);
    context = new TransportContext(transportConf, handler, true);
    server = context.createServer(conf.getInt(PORT_KEY, DEFAULT_PORT), List.of());
    MetricRegistry metrics = new MetricRegistry();
    metrics.registerAll(handler.getAllMetrics());
    jmx = JmxReporter.forRegistry(metrics).inDomain(JMX_DOMAIN).build();
    jmx.start();
    super.serviceInit(conf);
  }

  @Override
  public void initializeApplication(ApplicationInitializationContext app) {
    // YarnShuffleService registers the application's secret here; without SASL there is nothing to keep.
  }

  @Override
  public void stopApplication(ApplicationTerminationContext app) {
    // As YarnShuffleService: forget the executors, leave the files to YARN's deletion of the app's dirs.
    handler.applicationRemoved(app.getApplicationId().toString(), false);
  }

  /** The port this service listens on, as four big-endian bytes. */
  @Override
  public ByteBuffer getMetaData() {
    return ByteBuffer.allocate(Integer.BYTES).putInt(0, server.getPort());
  }

  @Override
  protected void serviceStop() throws Exception {
    if (jmx != null) {
      jmx.close();
    }
    if (server != null) {
      server.close();
    }
    if (handler != null) {
      handler.close();
    }
    if (context != null) {
      context.close();
    }
    super.serviceStop();
  }
}
