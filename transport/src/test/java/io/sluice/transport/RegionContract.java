package io.sluice.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Local life cycle of registered regions: allocation, descriptors, reference counts, revocation. */
public interface RegionContract extends TransportContractFixture {

  @Test
  default void allocatedRegionIsZeroedAndDescribed() throws Exception {
    Transport t = harness().open(MessageHandler.REJECT_ALL);
    assertEquals(provider(), t.provider());
    try (RegisteredRegion r = t.allocate(100_003)) {
      assertEquals(100_003, r.length());
      ByteBuffer b = r.buffer();
      assertEquals(0, b.position());
      assertEquals(100_003, b.limit());
      for (int i = 0; i < b.limit(); i++) {
        if (b.get(i) != 0) {
          throw new AssertionError("allocated memory not zeroed at " + i);
        }
      }
      RemoteDescriptor d = r.descriptor();
      assertEquals(t.nodeId(), d.node());
      assertEquals(100_003, d.length());
      assertEquals(d, RemoteDescriptor.fromBytes(d.toBytes()));
      assertEquals(RemoteDescriptor.ENCODED_LENGTH, d.toBytes().length);
      assertEquals(1, t.liveRegionCount());
    }
    assertEquals(0, t.liveRegionCount());
  }

  @Test
  default void regionsHaveDistinctKeys() throws Exception {
    Transport t = harness().open(MessageHandler.REJECT_ALL);
    try (RegisteredRegion a = t.allocate(4096);
        RegisteredRegion b = t.allocate(4096)) {
      assertNotEquals(a.descriptor().key(), b.descriptor().key());
      assertEquals(2, t.liveRegionCount());
    }
  }

  @Test
  default void twoTransportsHaveDistinctNodeIds() throws Exception {
    Transport a = harness().open(MessageHandler.REJECT_ALL);
    Transport b = harness().open(MessageHandler.REJECT_ALL);
    assertNotEquals(a.nodeId(), b.nodeId());
    assertNotEquals(a.localAddress(), b.localAddress());
    assertEquals("127.0.0.1", a.localAddress().host());
    assertTrue(a.localAddress().port() > 0, "listener port " + a.localAddress().port());
  }

  @Test
  default void referenceCountingKeepsMemoryUntilLastRelease() throws Exception {
    Transport t = harness().open(MessageHandler.REJECT_ALL);
    RegisteredRegion r = t.allocate(1024);
    assertEquals(1, r.refCnt());
    assertTrue(r.isOpen());
    r.retain();
    assertEquals(2, r.refCnt());
    r.close();
    assertFalse(r.isOpen(), "closed region still open");
    assertEquals(1, r.refCnt(), "close drops exactly the owner's reference");
    r.close(); // idempotent: does not drop the retained reference
    assertEquals(1, r.refCnt(), "a second close dropped another reference");
    r.buffer().put(0, (byte) 7); // still usable while referenced
    assertEquals(7, r.buffer().get(0));
    assertEquals(1, t.liveRegionCount());
    assertTrue(r.release(), "the last release frees the memory");
    assertEquals(0, r.refCnt());
    assertEquals(0, t.liveRegionCount());
    assertThrows(IllegalStateException.class, r::buffer);
    assertThrows(IllegalStateException.class, r::retain);
  }

  @Test
  default void releaseOfAnExtraReferenceDoesNotFree() throws Exception {
    Transport t = harness().open(MessageHandler.REJECT_ALL);
    try (RegisteredRegion r = t.allocate(64)) {
      r.retain();
      assertFalse(r.release());
      assertEquals(1, r.refCnt());
      assertTrue(r.isOpen(), "release of an extra reference must not revoke");
    }
  }

  @Test
  default void negativeAllocationIsRejected() throws Exception {
    Transport t = harness().open(MessageHandler.REJECT_ALL);
    assertThrows(IllegalArgumentException.class, () -> t.allocate(-1));
    assertEquals(0, t.liveRegionCount());
  }

  @Test
  default void sharedMemoryFilesArePrivateToTheUser() throws Exception {
    Transport t = harness().open(MessageHandler.REJECT_ALL);
    try (RegisteredRegion r = t.allocate(1 << 16)) {
      for (String name : TransportHarness.entries(harness().shmDir())) {
        Path p = harness().shmDir().resolve(name);
        java.util.Set<java.nio.file.attribute.PosixFilePermission> perms = Files.getPosixFilePermissions(p);
        for (java.nio.file.attribute.PosixFilePermission bit : perms) {
          String n = bit.name();
          assertFalse(n.startsWith("GROUP_") || n.startsWith("OTHERS_"),
              () -> p + " is open to other users: " + java.nio.file.attribute.PosixFilePermissions.toString(perms));
        }
      }
    }
  }

  @Test
  default void fileRegionMapsTheRequestedRangeReadOnly(@TempDir Path dir) throws Exception {
    Transport t = harness().open(MessageHandler.REJECT_ALL);
    byte[] content = TransportTestSupport.randomBytes(new Random(3), 200_000);
    Path file = Files.write(dir.resolve("data.bin"), content);
    try (RegisteredRegion r = t.registerFile(file, 12_345, 150_000)) {
      assertEquals(150_000, r.length());
      assertEquals(150_000, r.descriptor().length());
      ByteBuffer b = r.buffer();
      assertTrue(b.isReadOnly(), "file regions are read-only");
      byte[] mapped = new byte[150_000];
      b.get(mapped);
      byte[] want = new byte[150_000];
      System.arraycopy(content, 12_345, want, 0, want.length);
      assertArrayEquals(want, mapped);
    }
    assertEquals(0, t.liveRegionCount());
  }

  @Test
  default void fileRangeBeyondTheEndIsRejected(@TempDir Path dir) throws Exception {
    Transport t = harness().open(MessageHandler.REJECT_ALL);
    Path file = Files.write(dir.resolve("small.bin"), new byte[1000]);
    Exception e = assertThrows(Exception.class, () -> t.registerFile(file, 500, 501).close());
    assertTrue(e instanceof IOException || e instanceof IllegalArgumentException,
        "expected IOException or IllegalArgumentException, got " + e);
    assertThrows(IOException.class, () -> t.registerFile(dir.resolve("missing.bin"), 0, 10).close());
    assertEquals(0, t.liveRegionCount());
  }
}
