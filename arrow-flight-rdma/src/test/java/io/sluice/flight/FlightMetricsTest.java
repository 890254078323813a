package io.sluice.flight;

import static io.sluice.flight.DataPlaneGetTest.SECRET;
import static io.sluice.flight.DataPlaneGetTest.config;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.Eventually;
import io.sluice.transport.metrics.Metric;
import java.lang.management.ManagementFactory;
import java.util.Map;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import javax.management.ObjectName;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A server's {@link SluiceFlightServer#metrics()} and its JMX attributes after a get over the data
 * plane, a get over plain gRPC and a call without a token.
 */
class FlightMetricsTest {
  static Map<String, Long> values(SluiceFlightServer server) {
    return server.metrics().stream().collect(Collectors.toMap(Metric::name, Metric::value));
  }

  /** The metrics once {@code done} holds: the server counts on its own threads, not the test's. */
  static Map<String, Long> valuesOnce(SluiceFlightServer server, Predicate<Map<String, Long>> done) {
    return Eventually.matches("the server's metrics to count what the test did", Eventually.DEADLINE, () -> values(server), done);
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp", "shm"})
  void getsAreCountedWithTheirBytesByPath(String provider) throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = DataPlaneGetTest.server(allocator, config(provider, SECRET))) {
      String expected = TestTables.publishMixed(server, allocator, "t", 3, 1000,
          CompressionUtil.CodecType.NO_COMPRESSION);
      try (SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(),
          config(provider, SECRET));
           TableReader r = client.getStream(SluiceFlightServer.ticket("t"))) {
        assertEquals(provider, r.dataPath());
        assertEquals(expected, TestTables.render(r));
      }
      try (SluiceFlightClient plain = SluiceFlightClient.connect(allocator, server.location(),
          DataPlaneGetTest.grpcOnly(provider));
           TableReader r = plain.getStream(SluiceFlightServer.ticket("t"))) {
        assertEquals("grpc", r.dataPath());
        assertEquals(expected, TestTables.render(r));
      }
      try (FlightClient anonymous = FlightClient.builder(allocator, server.location()).build()) {
        FlightRuntimeException e = assertThrows(FlightRuntimeException.class,
            () -> anonymous.listFlights(org.apache.arrow.flight.Criteria.ALL).forEach(x -> { }));
        assertEquals(FlightStatusCode.UNAUTHENTICATED, e.status().code());
      }
      Map<String, Long> v = valuesOnce(server, m -> m.get("gets.dataPlane") == 1 && m.get("gets.plain") == 1);
      assertEquals(1, v.get("gets.dataPlane"), v.toString());
      assertEquals(1, v.get("gets.plain"), v.toString());
      assertEquals(0, v.get("gets.failed"), v.toString());
      assertEquals(1, v.get("grants.issued"), v.toString());
      long grpc = v.get("gets.bytes.grpc");
      assertTrue(grpc > 0, v.toString());
      // The same table either way: the data plane's bytes, all on the provider's path, equal gRPC's.
      assertEquals(grpc, v.get("gets.bytes." + provider), v.toString());
      assertEquals(grpc, v.get("gets.bytes.tcp") + v.get("gets.bytes.shm") + v.get("gets.bytes.verbs"));
      assertTrue(v.get("calls.unauthenticated") >= 1, v.toString());
      assertTrue(v.get("transport.connections.accepted") >= 1, v.toString());
      assertTrue(v.get("transport.memory.registeredBytes") >= grpc, v.toString());

      Object jmx = ManagementFactory.getPlatformMBeanServer().getAttribute(
          new ObjectName(SluiceFlightServer.JMX_NAME + server.location().getUri().getPort()), "gets.dataPlane");
      assertEquals(1L, jmx);
    }
  }
}
