package io.sluice.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sluice.transport.ProtocolException;
import io.sluice.transport.RemoteDescriptor;
import io.sluice.transport.TransportHarness;
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.wire.ErrorCode;
import io.sluice.transport.wire.FrameType;
import io.sluice.transport.wire.Frames;
import io.sluice.transport.wire.RawFrameSocket;
import io.sluice.transport.wire.ScriptedServer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Random;

/**
 * A same-host peer played by a script: a fake arena as a real one of this process would publish
 * it (named for this pid, so its {@code /proc/<pid>/fd} entries count as the owner's; token,
 * revocation slots with {@link #KEY} live in slot 0, one region file {@code region-0} holding
 * {@link #content()}), and a server that offers the arena, answers every shm OPEN with the
 * location it is given and every READ frame with {@link #carrierBytes()} (an ERROR of
 * REGION_REVOKED once {@link #revoke()} ran), so a test tells from the bytes which way a READ went.
 */
final class FakeShmPeer {
  static final long KEY = 0x1234_5678_9abcL;
  static final int FILE_BYTES = 64 * 1024;

  private final TransportHarness harness;
  private final Path arena;
  private final byte[] token;
  private final byte[] content;
  private final byte[] carrierBytes;
  private volatile boolean revoked;

  FakeShmPeer(TransportHarness harness) throws IOException {
    this.harness = harness;
    token = TransportTestSupport.randomBytes(new Random(1), ShmArena.TOKEN_LENGTH);
    Path folder = harness.scratchShmDir("fake-arena")
        .resolve("sluice-" + ProcessHandle.current().pid() + "-" + HexFormat.of().formatHex(token));
    arena = Files.createDirectory(folder,
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    writeOwnerOnly(arena.resolve(ShmArena.TOKEN_FILE), token);
    ByteBuffer slots = ByteBuffer.allocate(ShmArena.SLOTS * 8).order(ByteOrder.nativeOrder());
    slots.putLong(0, KEY);
    writeOwnerOnly(arena.resolve(ShmArena.SLOTS_FILE), slots.array());
    content = TransportTestSupport.randomBytes(new Random(2), FILE_BYTES);
    writeOwnerOnly(arena.resolve("region-0"), content);
    carrierBytes = TransportTestSupport.randomBytes(new Random(4), FILE_BYTES);
  }

  Path arena() {
    return arena;
  }

  /** What the names of the memfds of this arena start with. */
  String memfdNamePrefix() {
    return ShmArena.memfdNamePrefix(token);
  }

  /** Revokes {@link #KEY} as its owner would: its slot is cleared and READs of it are answered REGION_REVOKED. */
  void revoke() throws IOException {
    revoked = true;
    try (FileChannel slots = FileChannel.open(arena.resolve(ShmArena.SLOTS_FILE), StandardOpenOption.WRITE)) {
      slots.write(ByteBuffer.allocate(8), 0);
    }
  }

  /** What {@code region-0} of the arena holds. */
  byte[] content() {
    return content.clone();
  }

  /** What the server sends for a READ frame at any offset: its first bytes. */
  byte[] carrierBytes(int length) {
    return Arrays.copyOf(carrierBytes, length);
  }

  static RemoteDescriptor descriptor(long length) {
    return new RemoteDescriptor(ScriptedServer.NODE, 0, length, KEY);
  }

  /** Writes a file readable by its owner only, as an arena's files are. */
  static Path writeOwnerOnly(Path file, byte[] bytes) throws IOException {
    Files.write(file, bytes);
    return Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
  }

  /** Another 0600 file of this user, outside the fake arena: what a hostile peer would have copied. */
  Path privateFileElsewhere() throws IOException {
    Path elsewhere = harness.scratchShmDir("elsewhere");
    return writeOwnerOnly(elsewhere.resolve("private"), TransportTestSupport.randomBytes(new Random(3), FILE_BYTES));
  }

  /** A server that offers the fake arena and answers every shm OPEN with {@code region}. */
  ScriptedServer offering(ShmArena.Location region) throws IOException {
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
        RawFrameSocket.Frame f = next.get();
        if (f.type() == FrameType.CONTROL && shmOperation(f) == ShmMessages.OPEN) {
          peer.send(FrameType.CONTROL_REPLY, f.header().correlationId(), ShmMessages.encode(region));
        } else if (f.type() == FrameType.READ_REQUEST) {
          Frames.ReadRequestFrame r = Frames.ReadRequestFrame.decode(ByteBuffer.wrap(f.payload()));
          if (revoked) {
            peer.send(FrameType.ERROR, f.header().correlationId(),
                new Frames.ErrorFrame(ErrorCode.REGION_REVOKED, "region was revoked by its owner").encode());
          } else {
            peer.send(FrameType.READ_RESPONSE, f.header().correlationId(), ByteBuffer.wrap(carrierBytes, 0, r.length()));
          }
        }
      }
    });
  }

  private static byte shmOperation(RawFrameSocket.Frame f) throws ProtocolException {
    Frames.Control c = Frames.Control.decode(ByteBuffer.wrap(f.payload()));
    assertEquals(ShmMessages.SERVICE, c.service(), "a control request for another service");
    return ShmMessages.operation(c.request());
  }
}
