package io.sluice.flight;

import static io.sluice.flight.DataPlaneGetTest.SECRET;
import static io.sluice.flight.DataPlaneGetTest.config;
import static io.sluice.flight.DataPlaneGetTest.plainClient;
import static io.sluice.flight.DataPlaneGetTest.server;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.flight.client.Negotiator;
import io.sluice.flight.protocol.DataPlaneOffer;
import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.Transports;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightServer;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.flight.Result;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;

/**
 * Whoever is on the path between a client and its Flight server answers the data-plane action in
 * the server's place (a Flight server of the test's, which the client is pointed at): an offer it
 * did not sign with the secret for this client's nonce and audience is a "no" nothing
 * authenticated, whatever transport it names, and so is a signed offer whose address proves
 * another identity key than the one it names. Before the offer was signed, one naming another node
 * of the cluster (which holds the secret and passes the handshake) sent the client's gets there.
 */
class ForgedOfferTest {
  /** Answers the data-plane action with {@code answer(nonce, location of the fake)}'s results. */
  private static FlightServer fake(BufferAllocator allocator, BiFunction<byte[], Location, byte[][]> answer)
      throws Exception {
    Location[] where = new Location[1];
    FlightServer server = FlightServer.builder(allocator, Location.forGrpcInsecure("127.0.0.1", 0),
        new NoOpFlightProducer() {
          @Override
          public void doAction(CallContext context, Action action, StreamListener<Result> listener) {
            for (byte[] r : answer.apply(action.getBody(), where[0])) {
              listener.onNext(new Result(r));
            }
            listener.onCompleted();
          }
        }).build().start();
    where[0] = Location.forGrpcInsecure("127.0.0.1", server.getPort());
    return server;
  }

  private static Location locationOf(FlightServer server) {
    return Location.forGrpcInsecure("127.0.0.1", server.getPort());
  }

  /** The offer {@code server} makes (its answer without the signature). */
  private static byte[] offerOf(BufferAllocator allocator, SluiceFlightServer server) throws Exception {
    try (FlightClient flight = plainClient(allocator, server.location())) {
      return flight.doAction(new Action(DataPlaneOffer.ACTION)).next().getBody();
    }
  }

  /** The signature a server with {@code secret} makes over its answer for the client of {@code location}. */
  private static byte[] signature(String secret, byte[] nonce, Location location, byte[] answer) {
    TransportConfig c = config("tcp", secret);
    return CallToken.of(c).orElseThrow().sign(DataPlaneOffer.SIGNATURE_LABEL, nonce,
        CallToken.audienceOf(location).getBytes(StandardCharsets.UTF_8), answer);
  }

  /** How a client of the fake with the secret decides. */
  private static Negotiator.Outcome negotiate(BufferAllocator allocator, FlightServer fake) throws Exception {
    TransportConfig mine = config("tcp", SECRET);
    try (FlightClient flight = plainClient(allocator, locationOf(fake));
         Negotiator n = new Negotiator(mine, CallToken.of(mine), locationOf(fake))) {
      Negotiator.Outcome o = n.negotiate(flight);
      o.session().ifPresent(io.sluice.flight.client.DataPlaneSession::close);
      return o;
    }
  }

  @Test
  void anOfferOfAnotherNodeOfTheClusterWithoutTheSignatureIsAnUnauthenticatedNo() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer other = server(allocator, config("tcp", SECRET))) {
      byte[] offer = offerOf(allocator, other);
      try (FlightServer fake = fake(allocator, (nonce, at) -> new byte[][] {offer})) {
        Negotiator.Outcome o = negotiate(allocator, fake);
        assertTrue(o.session().isEmpty(), o.reason());
        assertFalse(o.authenticated(), o.reason());
        assertTrue(o.reason().contains("unsigned data-plane offer (no signature)"), o.reason());

        // The client's streams fail closed rather than read from the node the offer named.
        try (SluiceFlightClient client = SluiceFlightClient.connect(allocator, locationOf(fake), config("tcp", SECRET))) {
          FlightRuntimeException e = assertThrows(FlightRuntimeException.class,
              () -> client.getStream(SluiceFlightServer.ticket("t")).close());
          assertEquals(FlightStatusCode.UNAVAILABLE, e.status().code(), e.toString());
          assertTrue(e.getMessage().contains("sluice.flight.unsignedFallback"), e.getMessage());
        }
      }
    }
  }

  @Test
  void anOfferSignedUnderAnotherSecretOrForAnotherAudienceIsAnUnauthenticatedNo() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer other = server(allocator, config("tcp", SECRET))) {
      byte[] offer = offerOf(allocator, other);
      try (FlightServer wrongSecret = fake(allocator,
              (nonce, at) -> new byte[][] {offer, signature("another-secret-of-16+", nonce, at, offer)});
           FlightServer otherAudience = fake(allocator,
               (nonce, at) -> new byte[][] {offer, signature(SECRET, nonce, other.location(), offer)});
           FlightServer oldNonce = fake(allocator,
               (nonce, at) -> new byte[][] {offer, signature(SECRET, new byte[16], at, offer)})) {
        for (FlightServer fake : new FlightServer[] {wrongSecret, otherAudience, oldNonce}) {
          Negotiator.Outcome o = negotiate(allocator, fake);
          assertTrue(o.session().isEmpty(), o.reason());
          assertFalse(o.authenticated(), o.reason());
          assertTrue(o.reason().contains("its signature does not verify"), o.reason());
        }
      }
    }
  }

  /**
   * The fake holds the secret here and signs an offer naming one transport's address and another
   * transport's key: the client reaches the address, whose handshake proves a key that is not the
   * one named, and takes no session. (No second key with a real node's 64-bit id can be found; the
   * client compares the whole key, so any other key stands for one.)
   */
  @Test
  void aSignedOfferWhoseAddressProvesAnotherKeyIsAnUnauthenticatedNo() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer reached = server(allocator, config("tcp", SECRET));
         SluiceFlightServer named = server(allocator, config("tcp", SECRET))) {
      DataPlaneOffer there = DataPlaneOffer.decode(offerOf(allocator, reached));
      DataPlaneOffer key = DataPlaneOffer.decode(offerOf(allocator, named));
      byte[] forged = new DataPlaneOffer(there.address(), key.identityKey(), there.provider(), there.maxStreams())
          .encode();
      try (FlightServer fake = fake(allocator, (nonce, at) -> new byte[][] {forged, signature(SECRET, nonce, at, forged)})) {
        Negotiator.Outcome o = negotiate(allocator, fake);
        assertTrue(o.session().isEmpty(), o.reason());
        assertFalse(o.authenticated(), o.reason());
        assertTrue(o.reason().contains("proved another identity key"), o.reason());
      }
      // The same offer with the key of the transport at that address is taken: the refusals above
      // are the signature's and the key's, not the fake's.
      byte[] honest = there.encode();
      try (FlightServer fake = fake(allocator, (nonce, at) -> new byte[][] {honest, signature(SECRET, nonce, at, honest)})) {
        Negotiator.Outcome o = negotiate(allocator, fake);
        assertTrue(o.session().isPresent(), o.reason());
      }
    }
  }

  @Test
  void theServersOwnOfferIsSignedAndNamesItsTransportsKey() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config("tcp", SECRET));
         FlightClient flight = plainClient(allocator, server.location())) {
      byte[] nonce = new byte[16];
      nonce[0] = 7;
      Iterator<Result> results = flight.doAction(new Action(DataPlaneOffer.ACTION, nonce));
      byte[] answer = results.next().getBody();
      byte[] signed = results.next().getBody();
      assertTrue(CallToken.of(config("tcp", SECRET)).orElseThrow().verifySignature(signed,
          DataPlaneOffer.SIGNATURE_LABEL, nonce, CallToken.audienceOf(server.location()).getBytes(StandardCharsets.UTF_8),
          answer));
      results.forEachRemaining(r -> { });
      DataPlaneOffer offer = DataPlaneOffer.decode(answer);
      try (Transport client = Transports.open(config("tcp", SECRET), MessageHandler.REJECT_ALL);
           Connection c = client.connect(offer.address()).get(10, TimeUnit.SECONDS)) {
        assertTrue(offer.names(c.peerIdentityKey()));
        assertEquals(c.peerNode(), offer.nodeId());
      }
    }
  }
}
