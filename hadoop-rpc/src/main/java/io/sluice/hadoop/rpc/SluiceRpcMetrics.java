package io.sluice.hadoop.rpc;

import io.sluice.transport.metrics.LatencyHistogram;
import io.sluice.transport.metrics.Metric;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.hadoop.metrics2.MetricsCollector;
import org.apache.hadoop.metrics2.MetricsRecordBuilder;
import org.apache.hadoop.metrics2.MetricsSource;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.metrics2.lib.Interns;

/**
 * The transport side of a {@link SluiceRpcServer} as a Hadoop metrics2 source, registered beside
 * Hadoop's {@code RpcActivityForPort<port>} as {@code SluiceRpcActivityForPort<port>} (context
 * {@code rpc}, tag {@code port}), so every metrics2 sink and JMX ({@code
 * Hadoop:service=<prefix>,name=SluiceRpcActivityForPort<port>}) shows it: calls over the
 * transport and their time to answer, ACL and authentication failures, bytes by provider, and the
 * transport's own counters under {@code Transport*}. Hadoop's {@code RpcActivity} counts the same
 * calls' queue and processing time as it does for every call.
 *
 * <p>Values are read from the service when a sink or JMX asks. Thread safe.
 */
final class SluiceRpcMetrics implements MetricsSource {
  static final String NAME_PREFIX = "SluiceRpcActivityForPort";

  private final TransportCallService service;
  private final String name;
  private final int port;

  private SluiceRpcMetrics(TransportCallService service, int port) {
    this.service = service;
    this.port = port;
    this.name = NAME_PREFIX + port;
  }

  /** Registers the source of {@code service}, whose server listens on {@code port}, with Hadoop's metrics system. */
  static SluiceRpcMetrics register(TransportCallService service, int port) {
    SluiceRpcMetrics m = new SluiceRpcMetrics(service, port);
    DefaultMetricsSystem.instance().register(m.name, "Sluice transport of the RPC server on port " + port, m);
    return m;
  }

  /** Takes the source out of the metrics system. */
  void unregister() {
    DefaultMetricsSystem.instance().unregisterSource(name);
  }

  String name() {
    return name;
  }

  @Override
  public void getMetrics(MetricsCollector collector, boolean all) {
    TransportCallService.Stats s = service.stats();
    LatencyHistogram.Snapshot time = service.callTime();
    Map<String, Long> t = new HashMap<>();
    for (Metric m : service.transportMetrics().snapshot()) {
      t.put(m.name(), m.value());
    }
    MetricsRecordBuilder r = collector.addRecord("SluiceRpcActivity").setContext("rpc")
        .tag(Interns.info("port", "RPC port"), String.valueOf(port))
        .tag(Interns.info("provider", "transport provider"), service.provider());
    r.addCounter(Interns.info("Calls", "calls served over the transport"), s.calls());
    r.addCounter(Interns.info("CallTimeNumOps", "calls timed from arrival to answer"), time.count());
    r.addGauge(Interns.info("CallTimeAvgMicros", "mean time to answer a call, microseconds"),
        time.count() == 0 ? 0 : time.sumMicros() / time.count());
    r.addGauge(Interns.info("CallTimeP50Micros", "median time to answer a call (bucket bound), microseconds"),
        time.quantileMicros(0.5));
    r.addGauge(Interns.info("CallTimeP99Micros", "99th percentile time to answer a call (bucket bound), microseconds"),
        time.quantileMicros(0.99));
    r.addCounter(Interns.info("AuthorizationFailures", "transport calls refused by service-level authorization (ACL)"),
        s.authorizationFailures());
    r.addCounter(Interns.info("AuthenticationFailures", "transport handshakes refused for a wrong secret or key"),
        t.getOrDefault("handshake.failed.authentication", 0L));
    r.addCounter(Interns.info("RequestBodiesRead", "request bodies the server READ from callers"),
        s.requestBodiesRead());
    r.addCounter(Interns.info("ResponseBodiesPublished", "response bodies left for callers to READ"),
        s.responseBodiesPublished());
    r.addGauge(Interns.info("ResponseBodiesPending", "response bodies callers have not released yet"),
        s.responseBodiesPending());
    r.addGauge(Interns.info("CallerConnections", "connections open back to callers"), s.callerConnections());
    for (String path : io.sluice.transport.metrics.TransportMetrics.PATHS) {
      r.addCounter(Interns.info("RequestBytesRead" + camel(path), "request body bytes READ over " + path),
          t.getOrDefault("reads." + path + ".bytes", 0L));
    }
    r.addCounter(Interns.info("ResponseBytesServedTcp", "response body bytes callers READ in tcp READ frames"),
        t.getOrDefault("served.reads.bytes", 0L));
    for (Metric m : service.transportMetrics().snapshot()) {
      String n = "Transport" + camel(m.name());
      String d = "transport " + m.name() + ", " + m.unit().label();
      if (m.kind() == Metric.Kind.COUNTER) {
        r.addCounter(Interns.info(n, d), m.value());
      } else {
        r.addGauge(Interns.info(n, d), m.value());
      }
    }
  }

  /** "reads.latency.le.16us" as "ReadsLatencyLe16us": metrics2's naming. */
  static String camel(String dotted) {
    StringBuilder b = new StringBuilder();
    for (String part : dotted.split("[._]")) {
      if (!part.isEmpty()) {
        b.append(part.substring(0, 1).toUpperCase(Locale.ROOT)).append(part.substring(1));
      }
    }
    return b.toString();
  }
}
