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
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.TransportUnavailableException;
import io.sluice.transport.Transports;
import io.sluice.transport.wire.ScriptedClient;
import io.sluice.transport.wire.ScriptedServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
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
  private static final int FILE_BYTES = FakeShmPeer.FILE_BYTES;

  private ScriptedClient fixture;
  private Transport client;
  private RegisteredRegion dst;
  private FakeShmPeer peer;
  private Path arena;
  private byte[] content;

  @BeforeEach
  void start() throws Exception {
    assumeTrue(Transports.provider("shm").isAvailable(), "shm provider unavailable");
    fixture = ScriptedClient.open("shm", Map.of(), Map.of());
    client = fixture.client();
    dst = fixture.dst();
    peer = new FakeShmPeer(fixture.harness());
    arena = peer.arena();
    content = peer.content();
  }

  @AfterEach
  void stop() {
    if (fixture != null) {
      fixture.close();
    }
  }

  private ScriptedServer serverOffering(ShmArena.Location region) throws IOException {
    return peer.offering(region);
  }

  private Connection connect(ScriptedServer server) {
    Connection c = await(client.connect(server.address()));
    assertEquals("shm", c.dataPath(), "the fake arena was not accepted; the script is wrong");
    return c;
  }

  private static RemoteDescriptor descriptor(long length) {
    return FakeShmPeer.descriptor(length);
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
    Files.createSymbolicLink(file, peer.privateFileElsewhere());
    try (ScriptedServer server = serverOffering(new ShmArena.Location(file.toString(), 0, FILE_BYTES, 0))) {
      Connection c = connect(server);
      Throwable e = TransportTestSupport.failureOf(c.read(descriptor(FILE_BYTES), 0, dst, 0, 4096));
      assertInstanceOf(ProtocolException.class, e, () -> "READ of a region file that is a symlink: " + e);
      assertArrayEquals(new byte[4096], TransportTestSupport.bytesOf(dst, 0, 4096), "bytes of the linked file arrived");
      c.close();
    }
  }

  @Test
  void fileOutsideTheArenaIsNotMappedButReadOverTheCarrier() throws Exception {
    // Without trusted roots, a file outside the arena is what the peer serves over tcp, never
    // what this side finds at that path.
    Path other = peer.privateFileElsewhere();
    try (ScriptedServer server = serverOffering(new ShmArena.Location(other.toString(), 0, FILE_BYTES, 0))) {
      Connection c = connect(server);
      await(c.read(descriptor(FILE_BYTES), 0, dst, 0, 4096));
      TransportTestSupport.assertRegionEquals(peer.carrierBytes(4096), 0, dst, 0, 4096);
      assertEquals("tcp", c.dataPath(descriptor(FILE_BYTES)));
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
