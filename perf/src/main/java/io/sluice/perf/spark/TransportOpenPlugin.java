package io.sluice.perf.spark;

import io.sluice.transport.MessageHandler;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportException;
import io.sluice.transport.Transports;
import io.sluice.transport.config.TransportKeys;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import org.apache.spark.SparkConf;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;
import org.apache.spark.util.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Spark plugin ({@code spark.plugins}) that opens a Sluice transport in every executor as
 * RdmaShuffleManager does, on a thread of its own named as the manager's, then rehearses its
 * first connection, and moves no data: beside the sort shuffle it charges each executor JVM the
 * transport's own cost (its classes, its set-up and threads, the rehearsal, and the JIT work they
 * cause) and nothing of the shuffle's data path. {@code spark-shuffle-bench --with-open-under-sort}
 * runs the sort shuffle with it, to tell the two apart. The transport takes Spark's network
 * encryption setting, a random secret of its own and the executor's host; it accepts no request
 * and is closed when the executor stops.
 */
public final class TransportOpenPlugin implements SparkPlugin {
  private static final Logger LOG = LoggerFactory.getLogger(TransportOpenPlugin.class);

  @Override
  public DriverPlugin driverPlugin() {
    return null; // nothing on the driver
  }

  @Override
  public ExecutorPlugin executorPlugin() {
    return new Executor();
  }

  /** One executor's transport, opened off the executor's start. Thread safe. */
  private static final class Executor implements ExecutorPlugin {
    private Transport transport; // guarded by this
    private boolean stopped; // guarded by this

    @Override
    public void init(PluginContext context, Map<String, String> extraConf) {
      // The executor's host as RdmaShuffleManager advertises it (an executor's PluginContext has no RPC address).
      Map<String, String> settings = settings(context.conf(), Utils.localHostName());
      Thread t = new Thread(() -> open(settings), "sluice-transport-open");
      t.setDaemon(true);
      t.start();
    }

    private void open(Map<String, String> settings) {
      Transports.Opened opened;
      try {
        opened = Transports.openLeavingRehearsal(key -> Optional.ofNullable(settings.get(key)),
            MessageHandler.REJECT_ALL);
      } catch (TransportException e) {
        LOG.warn("The transport did not open: {}", e.toString());
        return;
      }
      synchronized (this) {
        if (stopped) {
          opened.transport().close();
          return;
        }
        transport = opened.transport();
      }
      opened.rehearsal().run();
    }

    @Override
    public void shutdown() {
      Transport t;
      synchronized (this) {
        stopped = true;
        t = transport;
        transport = null;
      }
      if (t != null) {
        t.close();
      }
    }
  }

  /** The transport's settings for an executor on {@code host} of an application with {@code conf}. */
  static Map<String, String> settings(SparkConf conf, String host) {
    byte[] secret = new byte[32];
    new SecureRandom().nextBytes(secret);
    return Map.of(
        TransportKeys.SECRET.key(), HexFormat.of().formatHex(secret),
        TransportKeys.ADVERTISE_HOST.key(), host,
        TransportKeys.ENCRYPTION.key(), String.valueOf(conf.getBoolean("spark.network.crypto.enabled", false)));
  }
}
