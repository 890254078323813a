package io.sluice.flight;

import static io.sluice.flight.DataPlaneGetTest.SECRET;
import static io.sluice.flight.DataPlaneGetTest.config;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;


import io.sluice.transport.SelfSignedCertificate;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A server on a {@code grpc+tls} location with a certificate made for the test: our client reads and
 * puts over the data plane and over plain Flight with the certificate trusted; a client that does
 * not trust it, or speaks plaintext, gets nothing.
 */
class TlsTest {
  @TempDir
  static Path dir;
  private static SelfSignedCertificate certificate;

  @BeforeAll
  static void makeCertificate() throws Exception {
    assumeTrue(Files.isExecutable(SelfSignedCertificate.keytool()), "no keytool in " + System.getProperty("java.home"));
    certificate = SelfSignedCertificate.create(dir);
  }

  private static SluiceFlightServer tlsServer(BufferAllocator allocator) throws Exception {
    return SluiceFlightServer.builder(allocator, Location.forGrpcTls("localhost", 0))
        .config(config("tcp", SECRET, Map.of("sluice.flight.puts", "true")))
        .useTls(certificate.certificate(), certificate.privateKey()).start();
  }

  private static io.sluice.transport.TransportConfig trusting(boolean dataPlane) {
    Map<String, String> m = new HashMap<>(Map.of(
        "sluice.flight.tlsTrustedCertificates", certificate.certificate().toString(),
        "sluice.flight.dataPlane", Boolean.toString(dataPlane)));
    return config("tcp", SECRET, m);
  }

  @Test
  void ourClientReadsAndPutsOverTls() throws Exception {
    try (BufferAllocator allocator = new RootAllocator()) {
      try (SluiceFlightServer server = tlsServer(allocator)) {
        assertEquals("grpc+tls", server.location().getUri().getScheme());
        String expected = TestTables.publishMixed(server, allocator, "mixed", 3, 400,
            CompressionUtil.CodecType.NO_COMPRESSION);
        for (String path : new String[] {"tcp", "grpc"}) {
          try (SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(),
                   trusting(path.equals("tcp")));
               DictionaryProvider.MapDictionaryProvider dictionaries = TestTables.cities(allocator);
               VectorSchemaRoot root = VectorSchemaRoot.create(TestTables.mixedSchema(), allocator)) {
            try (TableReader r = client.getStream(SluiceFlightServer.ticket("mixed"))) {
              assertEquals(path, r.dataPath());
              assertEquals(expected, TestTables.render(r));
            }
            try (TableWriter w = client.startPut(FlightDescriptor.path("up-" + path), root, dictionaries)) {
              assertEquals(path, w.dataPath());
              for (int k = 0; k < 3; k++) {
                TestTables.fillMixed(root, k * 400L, 400);
                w.putNext();
              }
              w.completed();
            }
            try (TableReader r = client.getStream(SluiceFlightServer.ticket("up-" + path))) {
              assertEquals(expected, TestTables.render(r));
            }
          }
        }
      }
    }
  }

  @Test
  void clientsThatDoNotTrustTheCertificateOrSpeakPlaintextGetNothing() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = tlsServer(allocator)) {
      server.publish("t", TestTables.numeric(allocator, 1, 10));
      try (SluiceFlightClient untrusting = SluiceFlightClient.connect(allocator, server.location(),
          config("tcp", SECRET, Map.of("sluice.flight.dataPlane", "false")))) {
        FlightRuntimeException e = assertThrows(FlightRuntimeException.class,
            () -> untrusting.flight().getInfo(FlightDescriptor.path("t")));
        assertEquals(FlightStatusCode.UNAVAILABLE, e.status().code(), e.toString());
      }
      Location plaintext = Location.forGrpcInsecure("localhost", server.location().getUri().getPort());
      try (FlightClient insecure = DataPlaneGetTest.plainClient(allocator, plaintext)) {
        FlightRuntimeException e = assertThrows(FlightRuntimeException.class,
            () -> insecure.getInfo(FlightDescriptor.path("t")));
        assertEquals(FlightStatusCode.UNAVAILABLE, e.status().code(), e.toString());
      }
      // A plain flight-core client trusting the certificate and presenting the token is answered.
      try (FlightClient trusting = FlightClient.builder(allocator, server.location())
               .trustedCertificates(new java.io.ByteArrayInputStream(Files.readAllBytes(certificate.certificate())))
               .intercept(CallToken.clientMiddleware(DataPlaneGetTest.token(server.location()))).build()) {
        assertEquals(10, trusting.getInfo(FlightDescriptor.path("t")).getRecords());
      }
    }
  }

  @Test
  void aTlsServersDataPlaneIsEncryptedWhateverItsConfigurationSays() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer tls = tlsServer(allocator);
         SluiceFlightServer plaintext = DataPlaneGetTest.server(allocator, config("tcp", SECRET));
         io.sluice.transport.Transport client = io.sluice.transport.Transports.open(config("tcp", SECRET),
             io.sluice.transport.MessageHandler.REJECT_ALL)) {
      // The client does not ask for encryption: only the TLS server's side can turn it on.
      try (io.sluice.transport.Connection c = client.connect(tls.dataPlaneAddress().orElseThrow())
          .get(10, java.util.concurrent.TimeUnit.SECONDS)) {
        assertTrue(c.encrypted(), "batch bodies of a TLS server would travel in clear on its data plane");
      }
      try (io.sluice.transport.Connection c = client.connect(plaintext.dataPlaneAddress().orElseThrow())
          .get(10, java.util.concurrent.TimeUnit.SECONDS)) {
        assertFalse(c.encrypted(), "a plaintext server's data plane follows its configuration");
      }
    }
  }

  @Test
  void anUnreadableTrustFileIsNamed() {
    try (BufferAllocator allocator = new RootAllocator()) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SluiceFlightClient.connect(
          allocator, Location.forGrpcTls("localhost", 1), config("tcp", SECRET,
              Map.of("sluice.flight.tlsTrustedCertificates", dir.resolve("missing.pem").toString()))));
      assertTrue(e.getMessage().contains("sluice.flight.tlsTrustedCertificates"), e.getMessage());
    }
  }
}
