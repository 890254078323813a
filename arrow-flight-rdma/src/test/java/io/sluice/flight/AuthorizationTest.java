package io.sluice.flight;

import static io.sluice.flight.DataPlaneGetTest.SECRET;
import static io.sluice.flight.DataPlaneGetTest.config;
import static io.sluice.flight.DataPlaneGetTest.server;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.sluice.flight.plane.FrameLink;
import io.sluice.flight.protocol.DataPlaneProtocol;
import io.sluice.flight.protocol.DataPlaneProtocol.BodyFrame;
import io.sluice.flight.protocol.DataPlaneProtocol.OpenGet;
import io.sluice.flight.protocol.DataPlaneProtocol.Pull;
import io.sluice.flight.protocol.DataPlaneOffer;
import io.sluice.transport.Connection;
import io.sluice.transport.Eventually;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.RemoteHandlerException;
import io.sluice.transport.Transport;
import io.sluice.transport.Transports;
import io.sluice.transport.UnknownKeyException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;

/**
 * Only the transport peer that opened a stream with a valid grant can pull its announcements and
 * READ its batches; a grant
 * works once; a command without a valid grant is refused as unauthenticated.
 */
class AuthorizationTest {

  @Test
  void anotherAuthenticatedPeerReadsNothingOfAStream() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config("tcp", SECRET));
         FlightClient flight = DataPlaneGetTest.plainClient(allocator, server.location());
         Transport owner = Transports.open(config("tcp", SECRET), MessageHandler.REJECT_ALL);
         Transport intruder = Transports.open(config("tcp", SECRET), MessageHandler.REJECT_ALL)) {
      server.publish("t", TestTables.numeric(allocator, 2, 4096));
      DataPlaneOffer offer = DataPlaneOffer.decode(flight.doAction(new Action(DataPlaneOffer.ACTION)).next().getBody());
      try (Connection mine = owner.connect(offer.address()).get(10, TimeUnit.SECONDS);
           Connection theirs = intruder.connect(offer.address()).get(10, TimeUnit.SECONDS);
           RegisteredRegion myDst = owner.allocate(1 << 20);
           RegisteredRegion theirDst = intruder.allocate(1 << 20)) {
        byte[] grant = DataPlaneProtocol.grantReply(mine.request(DataPlaneProtocol.grantRequest()).get(10, TimeUnit.SECONDS));
        byte[] command = DataPlaneProtocol.encode(new OpenGet(grant, SluiceFlightServer.ticket("t").getBytes()));
        BodyFrame body0;
        try (FlightClient.ExchangeReaderWriter x = flight.doExchange(FlightDescriptor.command(command))) {
          FrameLink link = new FrameLink(x.getReader(), x.getWriter(), allocator);
          link.receive().orElseThrow(); // schema
          // Announcements are pulled over the transport, by the peer the grant was issued to only.
          ExecutionException refused = assertThrows(ExecutionException.class, () -> theirs
              .request(DataPlaneProtocol.encode(new Pull(grant, 0, 1))).get(10, TimeUnit.SECONDS));
          assertInstanceOf(RemoteHandlerException.class, refused.getCause());
          BodyFrame body = DataPlaneProtocol.decodeAnnouncement(
              mine.request(DataPlaneProtocol.encode(new Pull(grant, 0, 1))).get(10, TimeUnit.SECONDS)).bodies().get(0);
          body0 = body;
          int n = (int) body.body().length();

          // The intruder is authenticated with the same secret and knows the descriptor: unknown key.
          ExecutionException e = assertThrows(ExecutionException.class, () -> theirs
              .read(body.body().region(), body.body().offset(), theirDst, 0, n).get(10, TimeUnit.SECONDS));
          assertInstanceOf(UnknownKeyException.class, e.getCause());
          assertEquals(0L, theirDst.buffer().getLong(0));

          // The peer the grant was issued to reads it.
          mine.read(body.body().region(), body.body().offset(), myDst, 0, n).get(10, TimeUnit.SECONDS);
          // Column a: 4096 validity bits, all set, then its values 0, 1, ... (little-endian).
          java.nio.ByteBuffer got = myDst.buffer().order(java.nio.ByteOrder.LITTLE_ENDIAN);
          assertEquals(-1L, got.getLong(0));
          assertEquals(0L, got.getLong(512));
          assertEquals(1L, got.getLong(520));
          x.getReader().cancel("done", null);
        }
        awaitNoStreams(server);
        // The stream ended: its reader has lost access too.
        ExecutionException after = assertThrows(ExecutionException.class, () -> mine
            .read(body0.body().region(), body0.body().offset(), myDst, 0, 64).get(10, TimeUnit.SECONDS));
        assertInstanceOf(UnknownKeyException.class, after.getCause());

        // The grant was used: a second stream with it is refused.
        FlightRuntimeException reused = assertThrows(FlightRuntimeException.class, () -> {
          try (FlightClient.ExchangeReaderWriter x = flight.doExchange(FlightDescriptor.command(command))) {
            x.getReader().next();
          }
        });
        assertEquals(FlightStatusCode.UNAUTHENTICATED, reused.status().code(), reused.toString());
      }
      // A made-up grant is refused too.
      byte[] forged = DataPlaneProtocol.encode(new OpenGet(new byte[DataPlaneProtocol.GRANT_BYTES],
          SluiceFlightServer.ticket("t").getBytes()));
      FlightRuntimeException f = assertThrows(FlightRuntimeException.class, () -> {
        try (FlightClient.ExchangeReaderWriter x = flight.doExchange(FlightDescriptor.command(forged))) {
          x.getReader().next();
        }
      });
      assertEquals(FlightStatusCode.UNAUTHENTICATED, f.status().code());
      awaitNoStreams(server);
    }
  }

  /** Waits until the server serves no data-plane stream and no reader may READ any of its tables. */
  static void awaitNoStreams(SluiceFlightServer server) {
    Eventually.reaches("data-plane streams still being served", 0, server::activeDataPlaneStreams);
    Eventually.reaches("streams whose reader still has access to a table", 0, server::activeGrants);
  }
}
