package io.sluice.hadoop.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.hadoop.rpc.testproto.EchoTestProtos.EchoRequestProto;
import io.sluice.hadoop.rpc.testproto.EchoTestProtos.EmptyProto;
import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.hadoop.metrics2.MetricsRecord;
import org.apache.hadoop.metrics2.MetricsSource;
import org.apache.hadoop.metrics2.impl.MetricsCollectorImpl;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.thirdparty.protobuf.ByteString;
import org.junit.jupiter.api.Test;

/**
 * A server's {@code SluiceRpcActivityForPort<port>} metrics2 source, registered with Hadoop's
 * metrics system and JMX, and its values after calls over the transport: one refused by the ACL,
 * one whose body the server READ.
 */
class SluiceRpcMetricsTest {
  @Test
  void callsFailuresAndBytesByProviderReachMetrics2() throws Exception {
    DefaultMetricsSystem.initialize("SluiceRpcTest");
    try (RpcFixture fixture = new RpcFixture()) {
      RpcFixture.AclServer server = fixture.startServerServingOnly("alice");
      String source = ((SluiceRpcServer) server.server()).metricsSourceName().orElseThrow();
      EchoTestPB asAlice = fixture.proxyAs("alice", server);
      EchoTestPB asBob = fixture.proxyAs("bob", server);
      asAlice.callContext(null, EmptyProto.getDefaultInstance());
      byte[] large = new byte[1 << 20];
      asAlice.echo(null, EchoRequestProto.newBuilder().setPayload(ByteString.copyFrom(large)).build());
      RpcFixture.assertUnauthorized(() -> asBob.callContext(null, EmptyProto.getDefaultInstance()));

      // Registered with the metrics system, and so in JMX (whose copy is refreshed once a period).
      MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
      Set<ObjectName> names = jmx.queryNames(new ObjectName("Hadoop:service=*,name=" + source), null);
      assertEquals(1, names.size(), "JMX names of " + source + ": " + names);
      MetricsSource registered = DefaultMetricsSystem.instance().getSource(source);
      // What the system's next snapshot for its sinks holds, taken now with its own collector.
      MetricsCollectorImpl collector = new MetricsCollectorImpl();
      registered.getMetrics(collector, true);
      Map<String, Number> v = new HashMap<>();
      for (MetricsRecord r : collector.getRecords()) {
        r.metrics().forEach(m -> v.put(m.name(), m.value()));
      }
      assertEquals(3L, v.get("Calls").longValue(), v.toString());
      assertEquals(1L, v.get("AuthorizationFailures").longValue());
      assertEquals(0L, v.get("AuthenticationFailures").longValue());
      assertEquals(1L, v.get("RequestBodiesRead").longValue());
      assertTrue(v.get("RequestBytesReadTcp").longValue() >= large.length, v.toString());
      assertEquals(3L, v.get("CallTimeNumOps").longValue());
      assertTrue(v.get("CallTimeP99Micros").longValue() > 0);
      assertTrue(v.get("TransportConnectionsAccepted").longValue() >= 1);
      server.server().stop();
      assertEquals(Set.of(), jmx.queryNames(new ObjectName("Hadoop:service=*,name=" + source), null),
          "the source outlived its server");
    }
  }
}
