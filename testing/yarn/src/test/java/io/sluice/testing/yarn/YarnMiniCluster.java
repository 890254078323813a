package io.sluice.testing.yarn;

import io.sluice.transport.Eventually;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.management.JMException;
import javax.management.ObjectName;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.SignalContainerCommand;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.server.MiniYARNCluster;

/**
 * Hadoop's MiniYARNCluster in this JVM: one ResourceManager and one NodeManager, whose
 * containers (a Spark application's AM and executors) are separate JVM processes it launches and
 * kills, with {@link StandInShuffleService} as the NodeManager's {@code spark_shuffle} auxiliary
 * service on a free port. One NodeManager because every NodeManager's shuffle service must listen
 * on the same port ({@code spark.shuffle.service.port} is one value per application) and all of
 * them would be on this host.
 *
 * <p>Close it in a finally block (or try-with-resources): the cluster's non-daemon threads would
 * otherwise keep the JVM alive. Not thread safe; one test class uses one.
 */
final class YarnMiniCluster implements AutoCloseable {
  private static final long START_TIMEOUT_MS = TimeUnit.SECONDS.toMillis(60);
  private static final String KEEP_LOGS_PROPERTY = "sluice.yarn.keepContainerLogs";

  private final MiniYARNCluster cluster;
  private final YarnClient client;
  private final int shuffleServicePort;

  private YarnMiniCluster(MiniYARNCluster cluster, YarnClient client, int shuffleServicePort) {
    this.cluster = cluster;
    this.client = client;
    this.shuffleServicePort = shuffleServicePort;
  }

  /** Starts the cluster and waits (at most 60 s) until its NodeManager is connected. */
  static YarnMiniCluster start(String name) throws InterruptedException, YarnException {
    MiniYARNCluster cluster = new MiniYARNCluster(name, 1, 1, 1);
    YarnClient client = null;
    try {
      cluster.init(configuration());
      cluster.start();
      // The RM's address is published once its RPC server is bound; until then it still ends in :0.
      Eventually.matches("the ResourceManager's address bound", Duration.ofMillis(START_TIMEOUT_MS),
          () -> cluster.getConfig().get(YarnConfiguration.RM_ADDRESS), address -> !address.endsWith(":0"));
      if (!cluster.waitForNodeManagersToConnect(START_TIMEOUT_MS)) {
        throw new IllegalStateException("the NodeManager did not connect to the ResourceManager within 60 s");
      }
      ByteBuffer meta = cluster.getNodeManager(0).getNMContext().getAuxServices().getMetaData()
          .get(StandInShuffleService.NAME);
      if (meta == null) {
        throw new IllegalStateException("the NodeManager runs no " + StandInShuffleService.NAME + " service");
      }
      client = YarnClient.createYarnClient();
      client.init(cluster.getConfig());
      client.start();
      return new YarnMiniCluster(cluster, client, meta.getInt(0));
    } catch (InterruptedException | YarnException | RuntimeException | Error e) {
      if (client != null) {
        client.stop();
      }
      cluster.stop();
      throw e;
    }
  }

  /** BaseYarnClusterSuite's settings, and what this mini cluster needs beyond them. */
  private static YarnConfiguration configuration() {
    YarnConfiguration c = new YarnConfiguration();
    c.set(YarnConfiguration.NM_AUX_SERVICES, StandInShuffleService.NAME);
    c.set(String.format(YarnConfiguration.NM_AUX_SERVICE_FMT, StandInShuffleService.NAME),
        StandInShuffleService.class.getName());
    c.setInt("spark.shuffle.service.port", 0);
    // A full disk would make the NodeManager refuse every container.
    c.setFloat(YarnConfiguration.NM_MAX_PER_DISK_UTILIZATION_PERCENTAGE, 100.0f);
    // hadoop-client-minicluster has no capacity-scheduler.xml: one queue, by hand.
    c.set("yarn.scheduler.capacity.root.queues", "default");
    c.setInt("yarn.scheduler.capacity.root.default.capacity", 100);
    c.setFloat("yarn.scheduler.capacity.root.default.user-limit-factor", 1);
    c.setInt("yarn.scheduler.capacity.root.default.maximum-capacity", 100);
    c.set("yarn.scheduler.capacity.root.default.state", "RUNNING");
    c.set("yarn.scheduler.capacity.root.default.acl_submit_applications", "*");
    c.set("yarn.scheduler.capacity.root.default.acl_administer_queue", "*");
    c.setInt("yarn.scheduler.capacity.node-locality-delay", -1);
    // On localhost, so the RM's web server does not race for <hostname>:0 (SPARK-35002).
    c.set(YarnConfiguration.RM_HOSTNAME, "localhost");
    // Room for an AM and two executors of 512 MiB heap (plus Spark's 384 MiB overhead each).
    c.setInt(YarnConfiguration.NM_PMEM_MB, 6144);
    c.setInt(YarnConfiguration.NM_VCORES, 4);
    c.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 256);
    c.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false);
    c.setBoolean(YarnConfiguration.NM_PMEM_CHECK_ENABLED, false);
    // Stopping: the NodeManager waits for its applications' clean-up up to the kill waits plus 1 s
    // (5 s by default), and for pending container-log deletions up to 10 s. Logs are deleted as
    // each application ends unless -Dsluice.yarn.keepContainerLogs=true (they are then under
    // target/test/data/<cluster>/*-logDir-nm-0_0 after the run, and stopping takes those 10 s).
    c.setLong(YarnConfiguration.NM_PROCESS_KILL_WAIT_MS, 1000);
    if (!Boolean.getBoolean(KEEP_LOGS_PROPERTY)) {
      c.setLong(YarnConfiguration.NM_LOG_RETAIN_SECONDS, 0);
    }
    return c;
  }

  /** The cluster's configuration as clients see it (the RM's real addresses). */
  Configuration config() {
    return cluster.getConfig();
  }

  /** The port the NodeManager's shuffle service listens on. */
  int shuffleServicePort() {
    return shuffleServicePort;
  }

  /**
   * Asks the ResourceManager to have the NodeManager kill a container with SIGKILL ({@code yarn
   * container -signal <id> FORCEFUL_SHUTDOWN}); the NodeManager does it on its next heartbeat.
   */
  void killContainer(String containerId) throws IOException, YarnException {
    client.signalToContainer(ContainerId.fromString(containerId), SignalContainerCommand.FORCEFUL_SHUTDOWN);
  }

  /** The bytes of shuffle blocks the NodeManager's shuffle service has sent since it started. */
  long shuffleServiceBytesSent() {
    try {
      ObjectName meter = new ObjectName(StandInShuffleService.JMX_DOMAIN + ":type=meters,name=blockTransferRateBytes");
      return ((Number) ManagementFactory.getPlatformMBeanServer().getAttribute(meter, "Count")).longValue();
    } catch (JMException e) {
      throw new IllegalStateException("the shuffle service's meter blockTransferRateBytes is not in JMX", e);
    }
  }

  @Override
  public void close() {
    client.stop();
    cluster.stop();
  }
}
