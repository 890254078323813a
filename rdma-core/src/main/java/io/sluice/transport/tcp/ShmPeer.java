package io.sluice.transport.tcp;

import io.sluice.transport.PeerClosedException;
import io.sluice.transport.ReadOutOfBoundsException;
import io.sluice.transport.ReadRequest;
import io.sluice.transport.RegionRevokedException;
import io.sluice.transport.TransportException;
import io.sluice.transport.region.Region;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * READs from a same-host peer through shared memory: the peer's backing file of a key is mapped
 * once (asked for over the connection with SHM_OPEN), then each READ is a bounds check, a check
 * of the peer's revocation slot, a copy, and the slot check again. The peer's threads do nothing
 * per READ. Mappings are dropped, not unmapped, so a copy in progress can never touch unmapped
 * memory; the GC unmaps them. Thread safe.
 */
final class ShmPeer {
  private record Mapping(ByteBuffer bytes, long length, int slot, long key) {}

  private final TcpConnection connection;
  private final MappedByteBuffer slots;
  private final Map<Long, CompletableFuture<Mapping>> mappings = new ConcurrentHashMap<>();

  private ShmPeer(TcpConnection connection, MappedByteBuffer slots) {
    this.connection = connection;
    this.slots = slots;
  }

  /**
   * Asks the peer for its arena and checks that this process sees the same folder. Empty if the
   * peer has none or it lives on another host (or is not readable by this user).
   */
  static Optional<ShmPeer> attach(TcpConnection connection, long timeoutNanos) throws TransportException {
    Frames.ShmInfo info;
    try {
      ByteBuffer reply = connection.control(FrameType.SHM_HELLO, ByteBuffer.allocate(0))
          .get(timeoutNanos, TimeUnit.NANOSECONDS);
      info = Frames.ShmInfo.decode(reply);
    } catch (java.util.concurrent.ExecutionException e) {
      if (e.getCause() instanceof io.sluice.transport.TransportUnavailableException) {
        return Optional.empty();
      }
      throw e.getCause() instanceof TransportException te ? te
          : new TransportException("shm set-up failed: " + e.getCause(), e.getCause());
    } catch (java.util.concurrent.TimeoutException e) {
      throw new io.sluice.transport.TransportTimeoutException("peer did not answer SHM_HELLO in time");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PeerClosedException("interrupted during shm set-up");
    }
    Path dir = Path.of(info.directory());
    try {
      byte[] token = Files.readAllBytes(dir.resolve(ShmArena.TOKEN_FILE));
      if (!Arrays.equals(token, info.token())) {
        return Optional.empty();
      }
      try (FileChannel ch = FileChannel.open(dir.resolve(ShmArena.SLOTS_FILE), StandardOpenOption.READ)) {
        return Optional.of(new ShmPeer(connection, ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size())));
      }
    } catch (IOException | SecurityException e) {
      return Optional.empty(); // another host, or not ours to read: READs stay on tcp
    }
  }

  CompletableFuture<Void> read(ReadRequest r) {
    long key = r.remote().key();
    CompletableFuture<Mapping> m = mappings.computeIfAbsent(key, this::open);
    if (m.isDone() && !m.isCompletedExceptionally()) {
      return copy(m.join(), r);
    }
    return m.thenCompose(mapping -> copy(mapping, r));
  }

  private CompletableFuture<Mapping> open(long key) {
    CompletableFuture<Mapping> f = connection.control(FrameType.SHM_OPEN, new Frames.ShmOpen(key).encode())
        .thenApply(reply -> {
          try {
            Frames.ShmRegion region = Frames.ShmRegion.decode(reply);
            if (region.slot() >= ShmArena.SLOTS || region.length() > Integer.MAX_VALUE) {
              throw new io.sluice.transport.ProtocolException("SHM_REGION out of range");
            }
            try (FileChannel ch = FileChannel.open(Path.of(region.path()), StandardOpenOption.READ)) {
              ByteBuffer bytes = ch.map(FileChannel.MapMode.READ_ONLY, region.fileOffset(), region.length());
              return new Mapping(bytes, region.length(), region.slot(), key);
            }
          } catch (IOException e) {
            throw new CompletionException(e instanceof TransportException ? e
                : new TransportException("cannot map the peer's region: " + e.getMessage(), e));
          }
        });
    f.whenComplete((x, e) -> {
      if (e != null) {
        mappings.remove(key, f);
      }
    });
    return f;
  }

  private CompletableFuture<Void> copy(Mapping m, ReadRequest r) {
    try {
      if (!connection.isOpen()) {
        throw new PeerClosedException("connection to " + connection.peer() + " is closed");
      }
      checkLive(m);
      long end = r.remoteOffset() + r.length();
      if (end < 0 || end > m.length()) {
        throw new ReadOutOfBoundsException("READ [" + r.remoteOffset() + ", +" + r.length()
            + ") outside region of " + m.length() + " bytes");
      }
      if (!(r.local() instanceof Region local) || !local.tryRetain()) {
        throw new IllegalArgumentException("destination is not a live region of this transport");
      }
      try {
        ByteBuffer dst = local.buffer();
        dst.limit((int) (r.localOffset() + r.length())).position((int) r.localOffset());
        ByteBuffer src = m.bytes().duplicate();
        src.limit((int) end).position((int) r.remoteOffset());
        dst.put(src);
      } catch (InternalError e) {
        throw new RegionRevokedException("peer's backing file shrank under the mapping: " + e.getMessage());
      } finally {
        local.release();
      }
      checkLive(m);
      return CompletableFuture.completedFuture(null);
    } catch (TransportException | RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private void checkLive(Mapping m) throws RegionRevokedException {
    long current = (long) ShmArena.LONGS.getVolatile(slots, m.slot() * 8);
    if (current != m.key()) {
      mappings.remove(m.key());
      throw new RegionRevokedException("region was revoked by its owner");
    }
  }
}
