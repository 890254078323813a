package io.sluice.transport.shm;

import static io.sluice.transport.TransportTestSupport.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.RemoteDescriptor;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportHarness;
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.Transports;
import io.sluice.transport.config.TransportKeys;
import io.sluice.transport.wire.ScriptedClient;
import io.sluice.transport.wire.ScriptedServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Registered files of a same-host peer outside its arena: mapped only below this side's trusted
 * roots, as regular files of this user reached without links through folders nobody else may
 * write; anything else a peer names is READ over the carrier, so the bytes are the ones the peer
 * serves, never those of the file this side would find. The scripted peer serves {@link
 * FakeShmPeer#carrierBytes} over tcp, so the destination shows which way each READ went.
 */
@Timeout(120)
class ShmTrustedFilesTest {
  private static final int FILE_BYTES = FakeShmPeer.FILE_BYTES;
  private static final RemoteDescriptor REGION = FakeShmPeer.descriptor(FILE_BYTES);

  @TempDir
  Path root;
  private Path shuffleDir;
  private byte[] fileContent;
  private ScriptedClient fixture;
  private FakeShmPeer peer;

  @BeforeEach
  void start() throws Exception {
    assumeTrue(Transports.provider("shm").isAvailable(), "shm provider unavailable");
    Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwxr-xr-x"));
    // Laid out as Spark's block managers lay out shuffle files below a local folder.
    shuffleDir = Files.createDirectories(root.resolve("blockmgr-1").resolve("0c"));
    fileContent = TransportTestSupport.randomBytes(new Random(7), 2 * FILE_BYTES);
    Files.write(shuffleDir.resolve("shuffle_0_0_0.data"), fileContent);
    fixture = ScriptedClient.open("shm", Map.of(), Map.of(TransportKeys.SHM_TRUSTED_FILE_ROOTS.key(), root.toString()));
    peer = new FakeShmPeer(fixture.harness());
  }

  @AfterEach
  void stop() {
    if (fixture != null) {
      fixture.close();
    }
  }

  /** Reads 4 KiB of the region whose OPEN names {@code file} at file offset 4096; returns the connection's path for it. */
  private String readNaming(Path file, byte[] expected) throws Exception {
    try (ScriptedServer server = peer.offering(new ShmArena.Location(file.toString(), 4096, FILE_BYTES, 0))) {
      Connection c = await(fixture.client().connect(server.address()));
      try {
        assertEquals("shm", c.dataPath(), "the fake arena was not accepted; the script is wrong");
        await(c.read(REGION, 0, fixture.dst(), 0, 4096));
        TransportTestSupport.assertRegionEquals(expected, 0, fixture.dst(), 0, 4096);
        return c.dataPath(REGION);
      } finally {
        c.close();
      }
    }
  }

  private byte[] fileBytesAt4096() {
    return Arrays.copyOfRange(fileContent, 4096, 8192);
  }

  @Test
  void fileBelowATrustedRootIsMapped() throws Exception {
    assertEquals("shm", readNaming(shuffleDir.resolve("shuffle_0_0_0.data"), fileBytesAt4096()));
  }

  @Test
  void fileBelowNoTrustedRootIsReadOverTheCarrier() throws Exception {
    assertEquals("tcp", readNaming(peer.privateFileElsewhere(), peer.carrierBytes(4096)));
  }

  @Test
  void pathLeavingTheRootThroughDotDotIsReadOverTheCarrier() throws Exception {
    Path outside = Files.write(root.resolveSibling(root.getFileName() + "-outside"), fileContent);
    try {
      Path escaping = Path.of(root.toString(), "..", outside.getFileName().toString());
      assertEquals("tcp", readNaming(escaping, peer.carrierBytes(4096)));
    } finally {
      Files.delete(outside);
    }
  }

  @Test
  void symlinkBelowTheRootIsNotFollowed() throws Exception {
    Path link = Files.createSymbolicLink(shuffleDir.resolve("shuffle_0_1_0.data"), peer.privateFileElsewhere());
    assertEquals("tcp", readNaming(link, peer.carrierBytes(4096)));
  }

  @Test
  void linkedFolderBelowTheRootIsNotFollowed() throws Exception {
    Path elsewhere = peer.privateFileElsewhere();
    Path linkedDir = Files.createSymbolicLink(root.resolve("blockmgr-2"), elsewhere.getParent());
    assertEquals("tcp", readNaming(linkedDir.resolve(elsewhere.getFileName()), peer.carrierBytes(4096)));
  }

  @Test
  void fileOfAnotherUserIsNotMapped() throws Exception {
    assumeTrue("root".equals(System.getProperty("user.name")), "only root can give a file to another user");
    Path file = shuffleDir.resolve("shuffle_0_0_0.data");
    Files.setAttribute(file, "unix:uid", 65534);
    assertEquals("tcp", readNaming(file, peer.carrierBytes(4096)));
  }

  @Test
  void fileInAFolderOthersMayWriteIsNotMapped() throws Exception {
    Files.setPosixFilePermissions(shuffleDir, PosixFilePermissions.fromString("rwxrwxrwx"));
    assertEquals("tcp", readNaming(shuffleDir.resolve("shuffle_0_0_0.data"), peer.carrierBytes(4096)));
  }

  @Test
  void aFolderIsNotMapped() throws Exception {
    assertEquals("tcp", readNaming(shuffleDir, peer.carrierBytes(4096)));
  }

  /** Two real transports: what the owner registers from a trusted folder is mapped by the reader. */
  @Test
  void registeredFileOfARealPeerIsMappedOnlyByAReaderThatTrustsItsFolder() throws Exception {
    TransportHarness harness = fixture.harness();
    Transport owner = harness.open(MessageHandler.REJECT_ALL);
    Transport untrusting = harness.open(MessageHandler.REJECT_ALL);
    Path file = shuffleDir.resolve("shuffle_0_0_0.data");
    try (RegisteredRegion region = owner.registerFile(file, 4096, FILE_BYTES);
        RegisteredRegion dst = untrusting.allocate(FILE_BYTES)) {
      Connection trusted = TransportHarness.connect(fixture.client(), owner);
      await(trusted.read(region.descriptor(), 0, fixture.dst(), 0, FILE_BYTES));
      TransportTestSupport.assertRegionEquals(Arrays.copyOfRange(fileContent, 4096, 4096 + FILE_BYTES), 0,
          fixture.dst(), 0, FILE_BYTES);
      assertEquals("shm", trusted.dataPath(region.descriptor()));

      Connection plain = TransportHarness.connect(untrusting, owner);
      await(plain.read(region.descriptor(), 0, dst, 0, FILE_BYTES));
      TransportTestSupport.assertRegionEquals(Arrays.copyOfRange(fileContent, 4096, 4096 + FILE_BYTES), 0,
          dst, 0, FILE_BYTES);
      assertEquals("shm", plain.dataPath(), "both transports are on this host");
      assertEquals("tcp", plain.dataPath(region.descriptor()));
      trusted.close();
      plain.close();
    }
  }
}
