package io.sluice.transport.shm;

import static io.sluice.transport.TransportTestSupport.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sluice.transport.Checksums;
import io.sluice.transport.Connection;
import io.sluice.transport.ProtocolException;
import io.sluice.transport.RegionTruncatedException;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.RemoteDescriptor;
import io.sluice.transport.RemoteView;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.Transports;
import io.sluice.transport.wire.ScriptedClient;
import io.sluice.transport.wire.ScriptedServer;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A same-host peer's file shortened by another process of the same user while this side has it
 * mapped: READs and reads of views fail with a {@link RegionTruncatedException} naming the region,
 * READs racing the cut either fail so or hold the file's bytes, and no fault reaches the reading
 * thread, neither at once nor later (the JVM reports the fault of a mapped access as an {@code
 * InternalError} at its thread's next transition into the VM, so each test does such work after
 * its reads).
 */
@Timeout(120)
class ShmTruncationTest {
  private static final int FILE_BYTES = 8 << 20;

  private ScriptedClient fixture;
  private FakeShmPeer peer;
  private Path file;
  private byte[] content;

  @BeforeEach
  void start() throws Exception {
    assumeTrue(Transports.provider("shm").isAvailable(), "shm provider unavailable");
    fixture = ScriptedClient.open("shm", Map.of(), Map.of());
    peer = new FakeShmPeer(fixture.harness());
    content = TransportTestSupport.randomBytes(new Random(7), FILE_BYTES);
    file = FakeShmPeer.writeOwnerOnly(peer.arena().resolve("region-large"), content);
  }

  @AfterEach
  void stop() {
    if (fixture != null) {
      fixture.close();
    }
  }

  private ScriptedServer server() throws Exception {
    return peer.offering(new ShmArena.Location(file.toString(), 0, FILE_BYTES, 0));
  }

  private Connection connect(ScriptedServer server) {
    Connection c = await(fixture.client().connect(server.address()));
    assertEquals("shm", c.dataPath(), "the fake arena was not accepted; the script is wrong");
    return c;
  }

  private static RemoteDescriptor region() {
    return FakeShmPeer.descriptor(FILE_BYTES);
  }

  private void cut(Path path, long size) throws Exception {
    try (FileChannel ch = FileChannel.open(path, StandardOpenOption.WRITE)) {
      ch.truncate(size);
    }
  }

  @Test
  void aViewOfAFileCutUnderItFailsItsReadsWithTheRegionNamed() throws Exception {
    try (ScriptedServer server = server()) {
      Connection c = connect(server);
      RemoteView view = await(c.view(region(), 0, FILE_BYTES)).orElseThrow();
      ByteBuffer first = ByteBuffer.allocateDirect(64 << 10);
      view.read(0, first);
      assertArrayEquals(Arrays.copyOf(content, 64 << 10), bytes(first.flip()));

      int half = FILE_BYTES / 2;
      cut(file, half);
      ByteBuffer across = ByteBuffer.allocate(8192);
      RegionTruncatedException e = assertThrows(RegionTruncatedException.class,
          () -> withoutFault(() -> view.read(half - 4096, across)));
      assertEquals(half, e.fileSize());
      assertEquals(FakeShmPeer.KEY, e.key());
      assertEquals(half - 4096, e.offset());
      assertEquals(8192, e.length());
      assertTrue(e.getMessage().contains(Long.toHexString(FakeShmPeer.KEY)) && e.getMessage().contains(file.toString())
          && e.getMessage().contains("cut to " + half + " bytes"), e.getMessage());
      assertEquals(0, across.position(), "bytes of a cut region arrived");
      // Bytes the file still holds are refused too: the region is broken.
      assertThrows(RegionTruncatedException.class, () -> withoutFault(() -> view.read(0, ByteBuffer.allocateDirect(4096))));

      // The cut region is mapped again for the next READ or view, and refused by the size check.
      assertInstanceOf(RegionTruncatedException.class,
          TransportTestSupport.failureOf(c.read(region(), 0, fixture.dst(), 0, 4096)));
      assertInstanceOf(RegionTruncatedException.class, TransportTestSupport.failureOf(c.view(region(), 0, 4096)));
      view.close();
      afterReads();
      c.close();
    }
  }

  /**
   * Whole-file READs while another thread cuts the file at a random moment, five times over (the
   * file restored in between): most cuts land during a READ's copy, which then ends short.
   */
  @Test
  void readsRacingACutEitherHoldTheFilesBytesOrFail() throws Exception {
    int expected = Checksums.crc32c(ByteBuffer.wrap(content));
    Random random = new Random(11);
    try (ScriptedServer server = server(); RegisteredRegion dst = fixture.client().allocate(FILE_BYTES)) {
      Connection c = connect(server);
      for (int trial = 0; trial < 5; trial++) {
        FakeShmPeer.writeOwnerOnly(file, content);
        CountDownLatch reading = new CountDownLatch(1);
        long delayMicros = random.nextInt(3000);
        Thread cutter = new Thread(() -> {
          try {
            if (reading.await(60, TimeUnit.SECONDS)) {
              TimeUnit.MICROSECONDS.sleep(delayMicros);
              cut(file, FILE_BYTES / 2 + 12345);
            }
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        }, "cutter");
        cutter.start();
        int done = 0;
        int wrong = 0;
        Throwable failure = null;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (failure == null && System.nanoTime() < deadline) {
          try {
            var read = c.read(region(), 0, dst, 0, FILE_BYTES);
            TransportTestSupport.awaitAllDone(List.of(read), TransportTestSupport.DEADLINE);
            failure = TransportTestSupport.failureIfAny(read).orElse(null);
            if (failure == null) {
              done++;
              wrong += Checksums.crc32c(dst.buffer()) == expected ? 0 : 1;
              reading.countDown();
            }
          } catch (InternalError fault) {
            throw new AssertionError("the fault of a READ of a cut file reached the reading thread", fault);
          }
        }
        cutter.join(TimeUnit.SECONDS.toMillis(60));
        afterReads();
        assertEquals(0, wrong, "READs that returned other bytes than the file's, of " + done + " in trial " + trial);
        int readsBefore = done;
        assertInstanceOf(RegionTruncatedException.class, failure, () -> "after " + readsBefore + " READs");
      }
      c.close();
    }
  }

  @Test
  void aSlotTableCutShortFailsTheReadWithoutAFault() throws Exception {
    try (ScriptedServer server = server()) {
      Connection c = connect(server);
      await(c.read(region(), 0, fixture.dst(), 0, 4096));
      cut(peer.arena().resolve(ShmArena.SLOTS_FILE), 0);
      Throwable e;
      try {
        e = TransportTestSupport.failureOf(c.read(region(), 4096, fixture.dst(), 0, 4096));
      } catch (InternalError fault) {
        throw new AssertionError("the fault of reading a cut slot table reached the reading thread", fault);
      }
      assertInstanceOf(ProtocolException.class, e);
      assertTrue(e.getMessage().contains("cut short"), e.getMessage());
      afterReads();
      c.close();
    }
  }

  @Test
  void anInterruptedReaderKeepsItsInterruptAndLeavesTheFileOpenForOthers() throws Exception {
    try (ScriptedServer server = server()) {
      Connection c = connect(server);
      RemoteView view = await(c.view(region(), 0, FILE_BYTES)).orElseThrow();
      Thread.currentThread().interrupt();
      ByteBuffer got = ByteBuffer.allocate(4096);
      view.read(4096, got);
      var read = c.read(region(), 8192, fixture.dst(), 0, 4096);
      assertTrue(Thread.interrupted(), "the reads cleared the thread's interrupt");
      await(read);
      assertArrayEquals(Arrays.copyOfRange(content, 4096, 8192), got.array());
      TransportTestSupport.assertRegionEquals(content, 8192, fixture.dst(), 0, 4096);
      await(c.read(region(), 0, fixture.dst(), 0, 4096));
      view.read(0, got.clear());
      assertArrayEquals(Arrays.copyOf(content, 4096), got.array());
      view.close();
      c.close();
    }
  }

  private interface Read {
    void run() throws TransportException;
  }

  /** Runs a read, failing the test if the JVM reports a fault of it, then or at the next transition. */
  private static void withoutFault(Read read) throws TransportException {
    try {
      read.run();
    } catch (InternalError fault) {
      throw new AssertionError("the fault of reading a cut file reached the reading thread", fault);
    } finally {
      afterReads();
    }
  }

  /**
   * Work that enters the VM (allocations past the thread's buffer, a sleep, a lock, formatting):
   * where a fault of an earlier mapped access is pending, it is thrown here.
   */
  private static void afterReads() {
    try {
      for (int i = 0; i < 64; i++) {
        byte[] big = new byte[1 << 20];
        big[i] = (byte) String.format("%d", i).length();
      }
      synchronized (ShmTruncationTest.class) {
        Thread.sleep(1);
      }
    } catch (InternalError fault) {
      throw new AssertionError("the fault of an earlier read of a cut file reached the reading thread late", fault);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static byte[] bytes(ByteBuffer b) {
    byte[] out = new byte[b.remaining()];
    b.duplicate().get(out);
    return out;
  }
}
