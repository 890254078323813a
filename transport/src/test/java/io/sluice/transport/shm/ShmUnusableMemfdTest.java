package io.sluice.transport.shm;

import static io.sluice.transport.TransportTestSupport.assertFailsWith;
import static io.sluice.transport.TransportTestSupport.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sluice.transport.Connection;
import io.sluice.transport.RegionRevokedException;
import io.sluice.transport.RemoteDescriptor;
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.Transports;
import io.sluice.transport.wire.ScriptedClient;
import io.sluice.transport.wire.ScriptedServer;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A same-host peer whose OPEN names a {@code /proc/<pid>/fd/<n>} entry this reader cannot use: a
 * reader in another pid namespace finds nothing there or a process of its own, and one that may
 * not read the owner's descriptors is refused. Such a region is READ over the carrier (the scripted
 * peer serves {@link FakeShmPeer#carrierBytes} there, so the destination shows which way a READ
 * went), the connection stays usable, and a region the peer revokes fails as revoked by its answer.
 */
@Timeout(120)
class ShmUnusableMemfdTest {
  private static final int FILE_BYTES = FakeShmPeer.FILE_BYTES;
  private static final RemoteDescriptor REGION = FakeShmPeer.descriptor(FILE_BYTES);
  private static final long PID = ProcessHandle.current().pid();

  private ScriptedClient fixture;
  private FakeShmPeer peer;

  @BeforeEach
  void start() throws Exception {
    assumeTrue(Transports.provider("shm").isAvailable(), "shm provider unavailable");
    fixture = ScriptedClient.open("shm", Map.of(), Map.of());
    peer = new FakeShmPeer(fixture.harness());
  }

  @AfterEach
  void stop() {
    if (fixture != null) {
      fixture.close();
    }
  }

  /** Reads the region whose OPEN names {@code path} twice, at two offsets; both come over the carrier. */
  private void readsOverTheCarrier(String path) throws Exception {
    try (ScriptedServer server = peer.offering(new ShmArena.Location(path, 0, FILE_BYTES, 0))) {
      Connection c = await(fixture.client().connect(server.address()));
      try {
        assertEquals("shm", c.dataPath(), "the fake arena was not accepted; the script is wrong");
        await(c.read(REGION, 0, fixture.dst(), 0, 4096));
        TransportTestSupport.assertRegionEquals(peer.carrierBytes(4096), 0, fixture.dst(), 0, 4096);
        assertEquals("tcp", c.dataPath(REGION));
        await(c.read(REGION, 8192, fixture.dst(), 4096, 1024));
        TransportTestSupport.assertRegionEquals(peer.carrierBytes(1024), 0, fixture.dst(), 4096, 1024);
        assertTrue(c.isOpen(), "the connection closed");
      } finally {
        c.close();
      }
    }
  }

  @Test
  void aDescriptorThatIsNotThereIsReadOverTheCarrier() throws Exception {
    // In another pid namespace the owner's pid may name no process at all.
    readsOverTheCarrier("/proc/" + PID + "/fd/" + Integer.MAX_VALUE);
  }

  @Test
  void aDescriptorOfAnotherProcessIsReadOverTheCarrier() throws Exception {
    readsOverTheCarrier("/proc/1/fd/0");
  }

  @Test
  void aDescriptorThatIsNotAMemfdIsReadOverTheCarrier() throws Exception {
    // What a process of the reader's namespace, at the owner's pid, would hold instead.
    Path file = peer.arena().resolve("region-0");
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      readsOverTheCarrier("/proc/" + PID + "/fd/" + descriptorOf(file));
    }
  }

  @Test
  void aMemfdOfAnotherArenaIsReadOverTheCarrier() throws Exception {
    assumeTrue(SealedMemory.isAvailable(), () -> "no sealed memory: " + SealedMemory.unavailabilityCause().orElse(""));
    int fd = SealedMemory.create(ShmArena.memfdNamePrefix(new byte[ShmArena.TOKEN_LENGTH]) + "region-0", FILE_BYTES);
    try {
      readsOverTheCarrier(SealedMemory.procPath(PID, fd).toString());
    } finally {
      SealedMemory.close(fd);
    }
  }

  @Test
  void aMemfdOfTheArenaIsStillMapped() throws Exception {
    assumeTrue(SealedMemory.isAvailable(), () -> "no sealed memory: " + SealedMemory.unavailabilityCause().orElse(""));
    int fd = SealedMemory.create(peer.memfdNamePrefix() + "region-0", FILE_BYTES);
    try (ScriptedServer server = peer.offering(new ShmArena.Location(SealedMemory.procPath(PID, fd).toString(), 0,
        FILE_BYTES, 0))) {
      Connection c = await(fixture.client().connect(server.address()));
      try {
        await(c.read(REGION, 0, fixture.dst(), 0, 4096));
        TransportTestSupport.assertRegionEquals(new byte[4096], 0, fixture.dst(), 0, 4096);
        assertEquals("shm", c.dataPath(REGION));
      } finally {
        c.close();
      }
    } finally {
      SealedMemory.close(fd);
    }
  }

  @Test
  void aRegionReadOverTheCarrierFailsAsRevokedOnceThePeerRevokesIt() throws Exception {
    try (ScriptedServer server = peer.offering(new ShmArena.Location("/proc/" + PID + "/fd/" + Integer.MAX_VALUE, 0,
        FILE_BYTES, 0))) {
      Connection c = await(fixture.client().connect(server.address()));
      try {
        await(c.read(REGION, 0, fixture.dst(), 0, 4096));
        TransportTestSupport.assertRegionEquals(peer.carrierBytes(4096), 0, fixture.dst(), 0, 4096);
        peer.revoke();
        assertFailsWith(RegionRevokedException.class, c.read(REGION, 0, fixture.dst(), 0, 4096));
        assertFailsWith(RegionRevokedException.class, c.read(REGION, 4096, fixture.dst(), 0, 4096));
        assertTrue(c.isOpen(), "the connection closed");
      } finally {
        c.close();
      }
    }
  }

  /** The number of a descriptor of this process open on {@code file}. */
  private static int descriptorOf(Path file) throws IOException {
    try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc/self/fd"))) {
      for (Path fd : fds) {
        try {
          if (Files.readSymbolicLink(fd).equals(file)) {
            return Integer.parseInt(fd.getFileName().toString());
          }
        } catch (IOException e) {
          // closed while listed
        }
      }
    }
    throw new IOException("no descriptor of this process is open on " + file);
  }
}
