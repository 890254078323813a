package io.sluice.flight.protocol;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.flight.protocol.DataPlaneProtocol.AckFrame;
import io.sluice.flight.protocol.DataPlaneProtocol.Announcement;
import io.sluice.flight.protocol.DataPlaneProtocol.Pull;
import io.sluice.flight.protocol.DataPlaneProtocol.BodyFrame;
import io.sluice.flight.protocol.DataPlaneProtocol.BodyRef;
import io.sluice.flight.protocol.DataPlaneProtocol.OpenGet;
import io.sluice.flight.protocol.DataPlaneProtocol.OpenPut;
import io.sluice.flight.protocol.DataPlaneProtocol.SchemaFrame;
import io.sluice.transport.NodeAddress;
import io.sluice.transport.RemoteDescriptor;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Round trips of every command and frame, and what malformed input gets. */
class DataPlaneProtocolTest {
  private static final byte[] GRANT = new byte[DataPlaneProtocol.GRANT_BYTES];

  static {
    Arrays.fill(GRANT, (byte) 7);
  }

  @Test
  void commandsRoundTrip() {
    OpenGet get = (OpenGet) DataPlaneProtocol.decodeCommand(DataPlaneProtocol.encode(new OpenGet(GRANT, new byte[] {1, 2})));
    assertArrayEquals(GRANT, get.grant());
    assertArrayEquals(new byte[] {1, 2}, get.ticket());
    OpenPut put = (OpenPut) DataPlaneProtocol.decodeCommand(
        DataPlaneProtocol.encode(new OpenPut(GRANT, new byte[] {9}, new NodeAddress("::1", 4242))));
    assertArrayEquals(new byte[] {9}, put.descriptor());
    assertEquals(new NodeAddress("::1", 4242), put.readFrom());
    assertFalse(DataPlaneProtocol.isCommand("select 1".getBytes()));
  }

  @Test
  void framesRoundTrip() {
    RemoteDescriptor d = new RemoteDescriptor(1, 2, 1000, 4);
    BodyFrame f = (BodyFrame) DataPlaneProtocol.decodeFrame(DataPlaneProtocol.encode(
        new BodyFrame(true, 5, new byte[] {3, 4}, new BodyRef(d, 10, 990), 0xCAFEF00D)));
    assertTrue(f.dictionary());
    assertEquals(5, f.sequence());
    assertArrayEquals(new byte[] {3, 4}, f.metadata());
    assertEquals(new BodyRef(d, 10, 990), f.body());
    assertEquals(0xCAFEF00D, f.crc32c());
    assertEquals(new AckFrame(77), DataPlaneProtocol.decodeFrame(DataPlaneProtocol.encode(new AckFrame(77))));
    SchemaFrame s = (SchemaFrame) DataPlaneProtocol.decodeFrame(DataPlaneProtocol.encode(new SchemaFrame(new byte[] {1})));
    assertArrayEquals(new byte[] {1}, s.metadata());
  }

  @Test
  void pullsAndAnnouncementsRoundTrip() {
    Pull p = DataPlaneProtocol.decodePull(DataPlaneProtocol.encode(new Pull(GRANT, 12, 64)));
    assertArrayEquals(GRANT, p.grant());
    assertEquals(12, p.consumed());
    assertEquals(64, p.maxBodies());
    assertFalse(p.stop());
    assertTrue(DataPlaneProtocol.decodePull(DataPlaneProtocol.encode(new Pull(GRANT, 3, 0, true))).stop());
    assertTrue(DataPlaneProtocol.isPull(DataPlaneProtocol.encode(p)));
    assertFalse(DataPlaneProtocol.isPull(DataPlaneProtocol.grantRequest()));
    RemoteDescriptor d = new RemoteDescriptor(1, 2, 1000, 4);
    List<BodyFrame> bodies = List.of(new BodyFrame(true, 0, new byte[] {1}, new BodyRef(d, 0, 8), -1),
        new BodyFrame(false, 1, new byte[] {2, 3}, new BodyRef(d, 8, 992), 0x1234_5678));
    ByteBuffer encoded = DataPlaneProtocol.encode(new Announcement(true, bodies));
    assertEquals(DataPlaneProtocol.encodedLength(bodies), encoded.remaining());
    Announcement a = DataPlaneProtocol.decodeAnnouncement(encoded);
    assertTrue(a.last());
    assertEquals(2, a.bodies().size());
    assertEquals(1, a.bodies().get(1).sequence());
    assertEquals(new BodyRef(d, 8, 992), a.bodies().get(1).body());
    assertArrayEquals(new byte[] {2, 3}, a.bodies().get(1).metadata());
    assertEquals(-1, a.bodies().get(0).crc32c());
    assertEquals(0x1234_5678, a.bodies().get(1).crc32c());
    assertFalse(DataPlaneProtocol.decodeAnnouncement(DataPlaneProtocol.encode(new Announcement(false, List.of()))).last());
  }

  @Test
  void malformedPullsAndAnnouncementsAreRefused() {
    assertThrows(IllegalArgumentException.class, () -> new Pull(GRANT, -1, 1));
    assertThrows(IllegalArgumentException.class, () -> new Pull(GRANT, 0, DataPlaneProtocol.MAX_ANNOUNCED_BODIES + 1));
    ByteBuffer pull = DataPlaneProtocol.encode(new Pull(GRANT, 1, 1));
    assertThrows(IllegalArgumentException.class, () -> DataPlaneProtocol.decodePull(pull.duplicate().limit(10)));
    RemoteDescriptor d = new RemoteDescriptor(1, 2, 1000, 4);
    ByteBuffer a = DataPlaneProtocol.encode(new Announcement(false,
        List.of(new BodyFrame(false, 0, new byte[] {1}, new BodyRef(d, 0, 8), 42))));
    ByteBuffer count = a.duplicate();
    count.putInt(2, 2); // claims two bodies, holds one
    assertThrows(IllegalArgumentException.class, () -> DataPlaneProtocol.decodeAnnouncement(count));
    ByteBuffer flag = a.duplicate();
    flag.put(1, (byte) 7);
    assertThrows(IllegalArgumentException.class, () -> DataPlaneProtocol.decodeAnnouncement(flag));
    ByteBuffer length = a.duplicate();
    length.putInt(6, Integer.MAX_VALUE);
    assertThrows(IllegalArgumentException.class, () -> DataPlaneProtocol.decodeAnnouncement(length));
  }

  @Test
  void anAnnouncedBodyWithoutItsChecksumIsRefused() {
    RemoteDescriptor d = new RemoteDescriptor(1, 2, 1000, 4);
    BodyFrame body = new BodyFrame(false, 0, new byte[] {1}, new BodyRef(d, 0, 8), 42);
    ByteBuffer a = DataPlaneProtocol.encode(new Announcement(true, List.of(body)));
    // The announcement of a body in the format of version 1: the body's frame ends before its CRC32C.
    ByteBuffer old = ByteBuffer.allocate(a.remaining() - 4);
    old.put(a.duplicate().limit(a.limit() - 4));
    old.putInt(6, old.getInt(6) - 4).flip();
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> DataPlaneProtocol.decodeAnnouncement(old));
    assertTrue(e.getMessage().contains("truncated"), e.getMessage());
    // A frame whose checksum is cut short, and one with bytes after it.
    ByteBuffer frame = DataPlaneProtocol.encode(body);
    assertThrows(IllegalArgumentException.class,
        () -> DataPlaneProtocol.decodeFrame(frame.duplicate().limit(frame.limit() - 2)));
    ByteBuffer longer = ByteBuffer.allocate(frame.remaining() + 4).put(frame.duplicate()).putInt(7).flip();
    assertTrue(assertThrows(IllegalArgumentException.class, () -> DataPlaneProtocol.decodeFrame(longer))
        .getMessage().contains("after the end"));
  }

  /** The identity key of the offer below: bytes 1 to 32 (an offer checks only its length). */
  static final byte[] OFFER_KEY = new byte[DataPlaneOffer.IDENTITY_KEY_BYTES];

  static {
    for (int i = 0; i < OFFER_KEY.length; i++) {
      OFFER_KEY[i] = (byte) (i + 1);
    }
  }

  /**
   * The offer's bytes, spelled out: python/tests/test_offer.py decodes the same ones. Version 4,
   * identity key {@link #OFFER_KEY} (node c82d2520f6e0b15d), port 40621, 16 gets per client, host
   * "10.0.0.7", "tcp".
   */
  static final String OFFER_HEX = "04" + "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20"
      + "00009ead" + "00000010" + "00000008" + "31302e302e302e37" + "00000003" + "746370";

  @Test
  void anOfferNamesTheTransportsIdentityKeyAndTheGetsOneClientMayHold() {
    DataPlaneOffer offer = new DataPlaneOffer(new NodeAddress("10.0.0.7", 40621), OFFER_KEY, "tcp", 16);
    assertEquals(OFFER_HEX, java.util.HexFormat.of().formatHex(offer.encode()));
    assertEquals(offer, DataPlaneOffer.decode(offer.encode()));
    assertEquals(0xc82d2520f6e0b15dL, offer.nodeId());
    assertTrue(offer.names(OFFER_KEY.clone()));
    byte[] other = OFFER_KEY.clone();
    other[31] ^= 1;
    assertFalse(offer.names(other));
    int bounds = 1 + DataPlaneOffer.IDENTITY_KEY_BYTES + 4;
    for (int bound : new int[] {0, -1}) {
      byte[] bytes = offer.encode();
      ByteBuffer.wrap(bytes).putInt(bounds, bound);
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DataPlaneOffer.decode(bytes));
      assertTrue(e.getMessage().contains(bound + " streams per client"), e.getMessage());
    }
    assertThrows(IllegalArgumentException.class,
        () -> new DataPlaneOffer(new NodeAddress("10.0.0.7", 1), OFFER_KEY, "tcp", 0));
    assertThrows(IllegalArgumentException.class,
        () -> new DataPlaneOffer(new NodeAddress("10.0.0.7", 1), new byte[8], "tcp", 1));
    byte[] truncated = Arrays.copyOf(offer.encode(), bounds + 2);
    assertThrows(IllegalArgumentException.class, () -> DataPlaneOffer.decode(truncated));
    assertThrows(IllegalArgumentException.class, () -> DataPlaneOffer.decode(Arrays.copyOf(offer.encode(), 1 + 8)));
  }

  @Test
  void aPeerOfAnotherVersionIsRefusedByName() {
    byte[] cmd = DataPlaneProtocol.encode(new OpenGet(GRANT, new byte[] {1}));
    int version = "sluice-data-plane".length();
    assertEquals(DataPlaneProtocol.VERSION, cmd[version]);
    cmd[version] = 1;
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DataPlaneProtocol.decodeCommand(cmd));
    assertTrue(e.getMessage().contains("version 1") && e.getMessage().contains("speaks " + DataPlaneProtocol.VERSION),
        e.getMessage());
    byte[] offer = new DataPlaneOffer(new NodeAddress("127.0.0.1", 1), OFFER_KEY, "tcp", 4).encode();
    offer[0] = 2;
    assertTrue(assertThrows(IllegalArgumentException.class, () -> DataPlaneOffer.decode(offer)).getMessage()
        .contains("version 2"));
    offer[0] = 1;
    e = assertThrows(IllegalArgumentException.class, () -> DataPlaneOffer.decode(offer));
    assertTrue(e.getMessage().contains("version 1") && e.getMessage().contains("speaks " + DataPlaneProtocol.VERSION),
        e.getMessage());
  }

  @Test
  void malformedInputIsRefusedWithAReason() {
    ByteBuffer ack = DataPlaneProtocol.encode(new AckFrame(1));
    ByteBuffer truncated = ack.duplicate().limit(5);
    assertTrue(assertThrows(IllegalArgumentException.class, () -> DataPlaneProtocol.decodeFrame(truncated))
        .getMessage().contains("truncated"));
    ByteBuffer trailing = ByteBuffer.allocate(ack.remaining() + 1).put(ack.duplicate()).put((byte) 0).flip();
    assertTrue(assertThrows(IllegalArgumentException.class, () -> DataPlaneProtocol.decodeFrame(trailing))
        .getMessage().contains("after the end"));
    assertThrows(IllegalArgumentException.class, () -> DataPlaneProtocol.decodeFrame(ByteBuffer.wrap(new byte[] {99})));
    // a body that lies outside its region
    RemoteDescriptor d = new RemoteDescriptor(1, 0, 100, 4);
    ByteBuffer body = DataPlaneProtocol.encode(new BodyFrame(false, 0, new byte[0], new BodyRef(d, 0, 100), 0));
    body.putLong(body.limit() - 4 - 8, 101);
    assertThrows(IllegalArgumentException.class, () -> DataPlaneProtocol.decodeFrame(body));
    // a metadata length that claims more than the frame holds
    ByteBuffer schema = DataPlaneProtocol.encode(new SchemaFrame(new byte[4]));
    schema.putInt(1, Integer.MAX_VALUE);
    assertThrows(IllegalArgumentException.class, () -> DataPlaneProtocol.decodeFrame(schema));
    byte[] cmd = DataPlaneProtocol.encode(new OpenGet(GRANT, new byte[0]));
    cmd[cmd.length - 1] = 9; // a ticket length beyond the end
    assertThrows(IllegalArgumentException.class, () -> DataPlaneProtocol.decodeCommand(cmd));
    assertThrows(IllegalArgumentException.class, () -> DataPlaneProtocol.encode(new OpenGet(new byte[3], new byte[0])));
  }

  @Test
  void randomBytesNeverEscapeAsAnythingButIllegalArgument() {
    Random random = new Random(11);
    for (int i = 0; i < 20_000; i++) {
      byte[] b = new byte[random.nextInt(80)];
      random.nextBytes(b);
      if (b.length > 0) {
        b[0] = (byte) (1 + random.nextInt(4));
      }
      try {
        DataPlaneProtocol.decodeFrame(ByteBuffer.wrap(b));
      } catch (IllegalArgumentException expected) {
        // refused with a reason
      }
    }
  }
}
