package io.sluice.flight;

import static io.sluice.flight.DataPlaneGetTest.SECRET;
import static io.sluice.flight.DataPlaneGetTest.config;
import static io.sluice.flight.DataPlaneGetTest.server;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.flight.plane.FrameLink;
import io.sluice.flight.protocol.DataPlaneOffer;
import io.sluice.flight.protocol.DataPlaneProtocol;
import io.sluice.flight.protocol.DataPlaneProtocol.BodyFrame;
import io.sluice.flight.protocol.DataPlaneProtocol.BodyRef;
import io.sluice.flight.protocol.DataPlaneProtocol.OpenPut;
import io.sluice.flight.protocol.DataPlaneProtocol.SchemaFrame;
import io.sluice.flight.protocol.IpcBodies;
import io.sluice.flight.table.FlightTable;
import io.sluice.flight.table.TableRegistry;
import io.sluice.transport.Checksums;
import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.ReadIntegrityException;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.Transports;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A published table's registered memory changed after publication (the bytes a corrupting device
 * or fabric would deliver): the reader refuses the body instead of building a batch from it, on
 * tcp (READ) and shm (a view of the server's memory), and the server frees the stream. A put's
 * body that differs from what its writer staged is refused by the server the same way.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReadIntegrityTest {
  private static final int BATCHES = 3;
  private static final int ROWS = 1000;

  @ParameterizedTest
  @ValueSource(strings = {"tcp", "shm"})
  void aCorruptBodyFailsTheStreamNamingTheCorruption(String provider) throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config(provider, SECRET))) {
      int regionsBefore = server.registeredRegions();
      server.publish("t", TestTables.numeric(allocator, BATCHES, ROWS));
      server.publish("clean", TestTables.numeric(allocator, BATCHES, ROWS));
      try (SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(),
          config(provider, SECRET))) {
        String expected = read(client, "t", provider);
        flipAByteOfTheSecondBatch(server, "t");

        FlightRuntimeException e = assertThrows(FlightRuntimeException.class, () -> read(client, "t", provider));
        ReadIntegrityException cause = integrityCause(e).orElseThrow(() -> new AssertionError(
            "no ReadIntegrityException in the cause chain of " + e, e));
        assertTrue(e.getMessage().contains("corrupt READ of record batch body 1"), e.getMessage());
        assertTrue(cause.getMessage().contains(server.dataPlaneAddress().orElseThrow().toString()), cause.getMessage());
        assertTrue(cause.length() > 0 && cause.offset() >= 0, cause.getMessage());

        // The failed stream ended on both sides; the connection still serves other streams.
        AuthorizationTest.awaitNoStreams(server);
        assertEquals(expected, read(client, "clean", provider));
      }
      AuthorizationTest.awaitNoStreams(server);
      server.remove("t");
      server.remove("clean");
      assertEquals(regionsBefore, server.registeredRegions(), "a table's registered memory outlived it");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp", "shm"})
  void withVerificationOffTheCorruptBytesReachTheReader(String provider) throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config(provider, SECRET))) {
      server.publish("t", TestTables.numeric(allocator, BATCHES, ROWS));
      try (SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(),
          config(provider, SECRET, Map.of("sluice.flight.verifyReads", "false")))) {
        String expected = read(client, "t", provider);
        flipAByteOfTheSecondBatch(server, "t");
        String corrupt = read(client, "t", provider);
        assertNotEquals(expected, corrupt, "the flipped byte did not reach the reader: the test proves nothing");
      }
      AuthorizationTest.awaitNoStreams(server);
    }
  }

  /**
   * A put whose body does not have the checksum its frame announces (what the server READ is not
   * what the writer staged): the server refuses the put naming the corruption and stores nothing.
   */
  @ParameterizedTest
  @ValueSource(strings = {"tcp", "shm"})
  void aPutBodyThatIsNotWhatTheWriterStagedIsRefused(String provider) throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config(provider, SECRET, PutAndConcurrencyTest.PUTS_ON));
         FlightClient flight = DataPlaneGetTest.plainClient(allocator, server.location());
         Transport writer = Transports.open(config(provider, SECRET), MessageHandler.REJECT_ALL);
         FlightTable source = TestTables.numeric(allocator, 1, ROWS)) {
      int regionsBefore = server.registeredRegions();
      DataPlaneOffer offer = DataPlaneOffer.decode(flight.doAction(new Action(DataPlaneOffer.ACTION)).next().getBody());
      ArrowRecordBatch batch = source.batches().get(0);
      int length = (int) IpcBodies.bodyLength(batch);
      try (Connection connection = writer.connect(offer.address()).get(10, TimeUnit.SECONDS);
           RegisteredRegion staged = writer.allocateFor(offer.nodeId(), length)) {
        IpcBodies.writeBody(batch, staged.buffer());
        int announced = Checksums.crc32c(staged.buffer()) ^ 1;
        byte[] grant = DataPlaneProtocol.grantReply(
            connection.request(DataPlaneProtocol.grantRequest()).get(10, TimeUnit.SECONDS));
        ByteBuffer d = TableRegistry.descriptor("p").serialize();
        byte[] descriptor = new byte[d.remaining()];
        d.get(descriptor);
        byte[] command = DataPlaneProtocol.encode(new OpenPut(grant, descriptor, writer.localAddress()));
        try (FlightClient.ExchangeReaderWriter x = flight.doExchange(FlightDescriptor.command(command))) {
          FrameLink link = new FrameLink(x.getReader(), x.getWriter(), allocator);
          link.send(DataPlaneProtocol.encode(new SchemaFrame(IpcBodies.schemaMetadata(source.messageSchema()))));
          link.send(DataPlaneProtocol.encode(new BodyFrame(false, 0, IpcBodies.metadata(batch),
              new BodyRef(staged.descriptor(), 0, length), announced)));
          x.getWriter().completed();
          FlightRuntimeException e = assertThrows(FlightRuntimeException.class, () -> {
            while (x.getReader().next()) {
              // acknowledgements
            }
          });
          assertEquals(FlightStatusCode.INVALID_ARGUMENT, e.status().code(), e.toString());
          assertTrue(e.getMessage().contains("corrupt READ of record batch body 0 of a put"), e.getMessage());
        }
      }
      AuthorizationTest.awaitNoStreams(server);
      assertTrue(server.published("p").isEmpty(), "a corrupt put was stored");
      assertEquals(regionsBefore, server.registeredRegions(), "a refused put's memory outlived it");
    }
  }

  private static String read(SluiceFlightClient client, String table, String provider) {
    try (TableReader r = client.getStream(SluiceFlightServer.ticket(table))) {
      assertEquals(provider, r.dataPath());
      return TestTables.render(r);
    }
  }

  /** Flips a byte of column "a"'s values in the second batch, in the server's registered memory. */
  private static void flipAByteOfTheSecondBatch(SluiceFlightServer server, String name) {
    try (FlightTable table = server.published(name).orElseThrow()) {
      ArrowBuf values = table.batches().get(1).getBuffers().get(1); // [validity, values] per column
      long at = 8L * 17;
      values.setByte(at, values.getByte(at) ^ 0x40);
    }
  }

  private static Optional<ReadIntegrityException> integrityCause(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof ReadIntegrityException r) {
        return Optional.of(r);
      }
    }
    return Optional.empty();
  }
}
