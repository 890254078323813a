package io.sluice.flight;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.sluice.transport.TransportConfig;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Flight keys read with the transport's parsers: the same syntax, and errors naming the key and value. */
class FlightOptionTest {
  @Test
  void defaultsAndSuffixes() {
    TransportConfig none = TransportConfig.of(Map.of());
    assertEquals(1L << 30, none.value(FlightOption.STAGING_BYTES));
    assertEquals(4L, none.value(FlightOption.STREAM_WINDOW));
    assertEquals(60_000L, none.value(FlightOption.ACK_TIMEOUT_MS));
    assertEquals(true, none.value(FlightOption.DATA_PLANE));
    assertEquals(8L << 20, none.value(FlightOption.READ_CHUNK_BYTES));
    TransportConfig set = TransportConfig.of(Map.of("sluice.flight.stagingBytes", "256m",
        "sluice.flight.ackTimeoutMs", "2min", "sluice.flight.dataPlane", "FALSE", "sluice.flight.readChunkBytes", "1m"));
    assertEquals(256L << 20, set.value(FlightOption.STAGING_BYTES));
    assertEquals(120_000L, set.value(FlightOption.ACK_TIMEOUT_MS));
    assertEquals(false, set.value(FlightOption.DATA_PLANE));
    assertEquals(1L << 20, set.value(FlightOption.READ_CHUNK_BYTES));
  }

  @Test
  void invalidValuesAreRefusedByName() {
    assertEquals("invalid value '0' for sluice.flight.streamWindow: must be positive",
        assertThrows(IllegalArgumentException.class,
            () -> TransportConfig.of(Map.of("sluice.flight.streamWindow", "0")).value(FlightOption.STREAM_WINDOW))
            .getMessage());
    assertEquals("invalid value 'maybe' for sluice.flight.dataPlane: expected true or false",
        assertThrows(IllegalArgumentException.class,
            () -> TransportConfig.of(Map.of("sluice.flight.dataPlane", "maybe")).value(FlightOption.DATA_PLANE))
            .getMessage());
  }

  /**
   * The server checks its own keys and every transport key (each provider's on the class path) before
   * it starts, on any host.
   */
  @Test
  void theServerRefusesAnInvalidKeyOfAnyProviderAtStartUp() {
    for (Map<String, String> bad : java.util.List.of(Map.of("sluice.transport.encryption", "maybe"),
        Map.of("sluice.flight.streamWindow", "0"), Map.of("sluice.transport.maxMessageBytes", "16q"),
        // Streams are granted to one reader each, which peers sharing one READ domain would escape.
        Map.of("sluice.transport.verbs.readDomains", "shared"))) {
      try (org.apache.arrow.memory.BufferAllocator allocator = new org.apache.arrow.memory.RootAllocator()) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> SluiceFlightServer.builder(allocator, org.apache.arrow.flight.Location.forGrpcInsecure("127.0.0.1", 0))
                .config(TransportConfig.of(bad)).start());
        String key = bad.keySet().iterator().next();
        assertEquals(true, e.getMessage().contains(key), e.getMessage());
      }
    }
  }
}
