package io.sluice.transport.shm;

import static io.sluice.transport.TransportTestSupport.assertFailsWith;
import static io.sluice.transport.TransportTestSupport.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sluice.transport.Connection;
import io.sluice.transport.ProtocolException;
import io.sluice.transport.RegionRevokedException;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.RemoteDescriptor;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportHarness;
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.TransportUnavailableException;
import io.sluice.transport.Transports;
import io.sluice.transport.spi.FrameType;
import io.sluice.transport.spi.Frames;
import io.sluice.transport.spi.RawFrameSocket;
import io.sluice.transport.spi.ScriptedClient;
import io.sluice.transport.spi.ScriptedServer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The shm reader against a scripted same-host server whose shared-memory answers are wrong: a
 * backing file that is gone, a region longer than its file. The READ fails with a specific
 * {@link TransportException}; the JVM survives. A truthful script is run first, so a failure
 * here is never the fake's fault.
 */
@Timeout(120)
class ShmClientFuzzTest {
  private static final long KEY = 0x1234_5678_9abcL;
  private static final int FILE_BYTES = 64 * 1024;

  private ScriptedClient fixture;
  private TransportHarness harness;
  private Transport client;
  private RegisteredRegion dst;
  private Path arena;
  private byte[] token;
  private byte[] content;

  @BeforeEach
  void start() throws Exception {
    assumeTrue(Transports.provider("shm").isAvailable(), "shm provider unavailable");
    fixture = ScriptedClient.open("shm", Map.of(), Map.of());
    harness = fixture.harness();
    client = fixture.client();
    dst = fixture.dst();
    // A fake arena as a same-host server would publish it: token, revocation slots, one file.
    arena = Files.setPosixFilePermissions(harness.scratchShmDir("fake-arena"), PosixFilePermissions.fromString("rwx------"));
    token = TransportTestSupport.randomBytes(new Random(1), ShmArena.TOKEN_LENGTH);
    writeOwnerOnly(arena.resolve(ShmArena.TOKEN_FILE), token);
    ByteBuffer slots = ByteBuffer.allocate(ShmArena.SLOTS * 8).order(ByteOrder.nativeOrder());
    slots.putLong(0, KEY);
    writeOwnerOnly(arena.resolve(ShmArena.SLOTS_FILE), slots.array());
    content = TransportTestSupport.randomBytes(new Random(2), FILE_BYTES);
    writeOwnerOnly(arena.resolve("region-0"), content);
  }

  /** Writes a file readable by its owner only, as an arena's files are. */
  private static Path writeOwnerOnly(Path file, byte[] bytes) throws IOException {
    Files.write(file, bytes);
    return Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
  }

  /** Another 0600 file of this user, outside the fake arena: what a hostile peer would have copied. */
  private Path privateFileElsewhere() throws IOException {
    Path elsewhere = harness.scratchShmDir("elsewhere");
    return writeOwnerOnly(elsewhere.resolve("private"), TransportTestSupport.randomBytes(new Random(3), FILE_BYTES));
  }

  @AfterEach
  void stop() {
    if (fixture != null) {
      fixture.close();
    }
  }

  /** A server that offers the fake arena and answers every shm OPEN with {@code region}. */
  private ScriptedServer serverOffering(ShmArena.Location region) throws IOException {
    return ScriptedServer.authenticated(peer -> {
      RawFrameSocket.Frame hello = peer.expect(FrameType.CONTROL);
      assertEquals(ShmMessages.HELLO, shmOperation(hello));
      peer.send(FrameType.CONTROL_REPLY, hello.header().correlationId(),
          ShmMessages.encode(new ShmArena.Info(arena.toString(), token)));
      while (true) {
        var next = peer.next();
        if (next.isEmpty()) {
          return;
        }
        if (next.get().type() == FrameType.CONTROL && shmOperation(next.get()) == ShmMessages.OPEN) {
          peer.send(FrameType.CONTROL_REPLY, next.get().header().correlationId(), ShmMessages.encode(region));
        }
      }
    });
  }

  private static byte shmOperation(RawFrameSocket.Frame f) throws ProtocolException {
    Frames.Control c = Frames.Control.decode(ByteBuffer.wrap(f.payload()));
    assertEquals(ShmMessages.SERVICE, c.service(), "a control request for another service");
    return ShmMessages.operation(c.request());
  }

  private Connection connect(ScriptedServer server) {
    Connection c = await(client.connect(server.address()));
    assertEquals("shm", c.dataPath(), "the fake arena was not accepted; the script is wrong");
    return c;
  }

  private static RemoteDescriptor descriptor(long length) {
    return new RemoteDescriptor(ScriptedServer.NODE, 0, length, KEY);
  }

  @Test
  void truthfulFakeArenaIsReadable() throws Exception {
    String file = arena.resolve("region-0").toString();
    try (ScriptedServer server = serverOffering(new ShmArena.Location(file, 0, FILE_BYTES, 0))) {
      Connection c = connect(server);
      await(c.read(descriptor(FILE_BYTES), 100, dst, 0, 5000));
      TransportTestSupport.assertRegionEquals(content, 100, dst, 0, 5000);
      c.close();
    }
  }

  @Test
  void backingFileThatIsGoneFailsAsRevoked() throws Exception {
    // What a reader sees when the owner frees the region (or closes) between SHM_REGION and the map.
    String file = arena.resolve("region-freed").toString();
    try (ScriptedServer server = serverOffering(new ShmArena.Location(file, 0, FILE_BYTES, 0))) {
      Connection c = connect(server);
      assertFailsWith(RegionRevokedException.class, c.read(descriptor(FILE_BYTES), 0, dst, 0, 100));
      c.close();
    }
  }

  @Test
  void regionLongerThanItsFileFailsWithoutCrashing() throws Exception {
    String file = arena.resolve("region-0").toString();
    try (ScriptedServer server = serverOffering(new ShmArena.Location(file, 0, 1 << 20, 0))) {
      Connection c = connect(server);
      Throwable e = TransportTestSupport.failureOf(c.read(descriptor(1 << 20), 512 * 1024, dst, 0, 4096));
      assertInstanceOf(TransportException.class, e, () -> "READ past the end of the peer's file: " + e);
      c.close();
    }
  }

  @Test
  void fileTruncatedUnderTheMappingFailsWithoutCrashing() throws Exception {
    Path file = arena.resolve("region-0");
    try (ScriptedServer server = serverOffering(new ShmArena.Location(file.toString(), 0, FILE_BYTES, 0))) {
      Connection c = connect(server);
      await(c.read(descriptor(FILE_BYTES), 0, dst, 0, 100)); // now mapped by the reader
      try (var ch = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.WRITE)) {
        ch.truncate(0);
      }
      Throwable e;
      try {
        e = TransportTestSupport.failureOf(c.read(descriptor(FILE_BYTES), 8192, dst, 0, 8192));
      } catch (InternalError fault) {
        // The JVM turns the SIGBUS of a copy from a truncated mapping into an InternalError,
        // in compiled code delivered some time after the faulting access.
        throw new AssertionError("the fault of reading a truncated peer file escaped into the caller's thread", fault);
      }
      assertInstanceOf(TransportException.class, e, () -> "READ of a truncated peer file: " + e);
      c.close();
    }
  }

  @Test
  void regionFileReplacedBySymlinkIsRefused() throws Exception {
    Path file = arena.resolve("region-0");
    Files.delete(file);
    Files.createSymbolicLink(file, privateFileElsewhere());
    try (ScriptedServer server = serverOffering(new ShmArena.Location(file.toString(), 0, FILE_BYTES, 0))) {
      Connection c = connect(server);
      Throwable e = TransportTestSupport.failureOf(c.read(descriptor(FILE_BYTES), 0, dst, 0, 4096));
      assertInstanceOf(ProtocolException.class, e, () -> "READ of a region file that is a symlink: " + e);
      assertArrayEquals(new byte[4096], TransportTestSupport.bytesOf(dst, 0, 4096), "bytes of the linked file arrived");
      c.close();
    }
  }

  @Test
  void fileOutsideTheArenaIsRefused() throws Exception {
    Path other = privateFileElsewhere();
    try (ScriptedServer server = serverOffering(new ShmArena.Location(other.toString(), 0, FILE_BYTES, 0))) {
      Connection c = connect(server);
      Throwable e = TransportTestSupport.failureOf(c.read(descriptor(FILE_BYTES), 0, dst, 0, 4096));
      assertInstanceOf(ProtocolException.class, e, () -> "READ of a file outside the peer's arena: " + e);
      assertArrayEquals(new byte[4096], TransportTestSupport.bytesOf(dst, 0, 4096), "bytes of the outside file arrived");
      c.close();
    }
  }

  @Test
  void arenaOpenToOtherUsersIsNotUsed() throws Exception {
    Files.setPosixFilePermissions(arena, PosixFilePermissions.fromString("rwxr-xr-x"));
    String file = arena.resolve("region-0").toString();
    try (ScriptedServer server = serverOffering(new ShmArena.Location(file, 0, FILE_BYTES, 0))) {
      Throwable e = TransportTestSupport.failureOf(client.connect(server.address()));
      assertInstanceOf(TransportUnavailableException.class, e, () -> "connect to a peer whose arena is 0755: " + e);
    }
  }

  @Test
  void arenaOfAnotherUserIsNotUsed() throws Exception {
    assumeTrue("root".equals(System.getProperty("user.name")), "only root can give the arena to another user");
    Files.setAttribute(arena, "unix:uid", 65534);
    String file = arena.resolve("region-0").toString();
    try (ScriptedServer server = serverOffering(new ShmArena.Location(file, 0, FILE_BYTES, 0))) {
      Throwable e = TransportTestSupport.failureOf(client.connect(server.address()));
      assertInstanceOf(TransportUnavailableException.class, e, () -> "connect to a peer whose arena is another user's: " + e);
    }
  }

  @Test
  void slotOutsideTheTableFailsTheRead() throws Exception {
    String file = arena.resolve("region-0").toString();
    try (ScriptedServer server = serverOffering(new ShmArena.Location(file, 0, FILE_BYTES, ShmArena.SLOTS))) {
      Connection c = connect(server);
      Throwable e = TransportTestSupport.failureOf(c.read(descriptor(FILE_BYTES), 0, dst, 0, 100));
      assertInstanceOf(TransportException.class, e, () -> "slot outside the table: " + e);
      c.close();
    }
  }
}
