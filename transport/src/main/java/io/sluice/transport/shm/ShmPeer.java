package io.sluice.transport.shm;

import io.sluice.transport.PeerClosedException;
import io.sluice.transport.ProtocolException;
import io.sluice.transport.ReadOutOfBoundsException;
import io.sluice.transport.ReadRequest;
import io.sluice.transport.RegionRevokedException;
import io.sluice.transport.RemoteDescriptor;
import io.sluice.transport.RemoteView;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportTimeoutException;
import io.sluice.transport.TransportUnavailableException;
import io.sluice.transport.region.Region;
import io.sluice.transport.spi.CarrierConnection;
import io.sluice.transport.spi.PeerPath;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * READs from a same-host peer through shared memory: the peer's backing file of a key is mapped
 * once (asked for over the carrier connection, an OPEN of {@link ShmMessages}), then each READ is a bounds check, a check
 * of the peer's revocation slot, a copy, and the slot check again. The peer's threads do nothing
 * per READ. Mappings of revoked regions are released by {@link #sweep()} (run by the transport's
 * timer) and all of them when the connection closes ({@link #close()}). Thread safe.
 */
public final class ShmPeer implements PeerPath {
  private final CarrierConnection connection;
  private final MappedByteBuffer slots;
  private final Map<Long, CompletableFuture<ShmMapping>> mappings = new ConcurrentHashMap<>();
  private volatile boolean closed;

  private ShmPeer(CarrierConnection connection, MappedByteBuffer slots) {
    this.connection = connection;
    this.slots = slots;
  }

  /**
   * Asks the peer for its arena and checks that this process sees the same folder. Empty if the
   * peer has none or it lives on another host (or is not readable by this user).
   */
  public static Optional<ShmPeer> attach(CarrierConnection connection, long timeoutNanos) throws TransportException {
    ShmArena.Info info;
    try {
      info = ShmMessages.decodeInfo(connection.control(ShmMessages.SERVICE, ShmMessages.hello())
          .get(timeoutNanos, TimeUnit.NANOSECONDS));
    } catch (ExecutionException e) {
      if (e.getCause() instanceof TransportUnavailableException) {
        return Optional.empty();
      }
      throw e.getCause() instanceof TransportException te ? te
          : new TransportException("shm set-up failed: " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      throw new TransportTimeoutException("peer did not answer the shm HELLO in time");
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
        if (ch.size() != (long) ShmArena.SLOTS * 8) {
          return Optional.empty();
        }
        return Optional.of(new ShmPeer(connection, ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size())));
      }
    } catch (IOException | SecurityException e) {
      return Optional.empty(); // another host, or not ours to read: READs stay on tcp
    }
  }

  @Override
  public CompletableFuture<Void> read(ReadRequest r) {
    CompletableFuture<ShmMapping> m = mapping(r.remote().key());
    if (m.isDone() && !m.isCompletedExceptionally()) {
      return copy(m.join(), r);
    }
    return m.thenCompose(mapping -> copy(mapping, r));
  }

  /**
   * A read-only slice of the peer's mapped region: the view holds the mapping (it is unmapped only
   * after the view closes, even when the region is revoked or the connection closes).
   */
  @Override
  public CompletableFuture<Optional<RemoteView>> view(RemoteDescriptor remote, long remoteOffset, long length) {
    CompletableFuture<ShmMapping> m = mapping(remote.key());
    if (m.isDone() && !m.isCompletedExceptionally()) {
      return viewOf(m.join(), remoteOffset, length);
    }
    return m.thenCompose(mapping -> viewOf(mapping, remoteOffset, length));
  }

  private CompletableFuture<ShmMapping> mapping(long key) {
    CompletableFuture<ShmMapping> m = mappings.get(key);
    if (m == null) {
      CompletableFuture<ShmMapping> mine = new CompletableFuture<>();
      m = mappings.putIfAbsent(key, mine);
      if (m == null) {
        m = mine;
        open(key, mine);
      }
    }
    return m;
  }

  private CompletableFuture<Optional<RemoteView>> viewOf(ShmMapping m, long offset, long length) {
    try {
      if (!connection.isOpen()) {
        throw new PeerClosedException("connection to " + connection.peer() + " is closed");
      }
      long end = offset + length;
      if (offset < 0 || length < 0 || end < 0 || end > m.length()) {
        throw new ReadOutOfBoundsException("view [" + offset + ", +" + length + ") outside region of "
            + m.length() + " bytes");
      }
      if (!m.tryAcquire()) {
        throw new RegionRevokedException("region was revoked by its owner");
      }
      try {
        checkLive(m);
        if (!m.fileCovers(end)) {
          drop(m);
          throw new RegionRevokedException("the peer's backing file shrank below the registered region");
        }
      } catch (TransportException | RuntimeException e) {
        m.release();
        throw e;
      } catch (IOException e) {
        m.release();
        throw new TransportException("cannot check the peer's backing file: " + e.getMessage(), e);
      }
      ByteBuffer bytes = m.bytes().limit((int) end).position((int) offset).slice().asReadOnlyBuffer();
      return CompletableFuture.completedFuture(Optional.of(new MappedView(bytes, m)));
    } catch (TransportException | RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** A view holding one acquisition of its mapping until closed. */
  private static final class MappedView implements RemoteView {
    private final ByteBuffer bytes;
    private final ShmMapping mapping;
    private final java.util.concurrent.atomic.AtomicBoolean open = new java.util.concurrent.atomic.AtomicBoolean(true);

    MappedView(ByteBuffer bytes, ShmMapping mapping) {
      this.bytes = bytes;
      this.mapping = mapping;
    }

    @Override
    public ByteBuffer buffer() {
      return bytes.duplicate();
    }

    @Override
    public void close() {
      if (open.compareAndSet(true, false)) {
        mapping.release();
      }
    }
  }

  /** Asks the peer for the key's backing file and maps it; the map entry goes if that fails. */
  private void open(long key, CompletableFuture<ShmMapping> result) {
    connection.control(ShmMessages.SERVICE, ShmMessages.open(key)).whenComplete((reply, error) -> {
      try {
        if (error != null) {
          throw error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        }
        ShmMapping mapping = map(ShmMessages.decodeLocation(reply), key);
        if (closed) {
          mapping.drop();
        }
        result.complete(mapping);
      } catch (Throwable t) {
        mappings.remove(key, result);
        result.completeExceptionally(t);
      }
    });
  }

  private ShmMapping map(ShmArena.Location region, long key) throws TransportException {
    if (region.slot() >= ShmArena.SLOTS || region.length() > Integer.MAX_VALUE) {
      throw new ProtocolException("shm REGION out of range");
    }
    FileChannel ch = null;
    try {
      ch = FileChannel.open(Path.of(region.path()), StandardOpenOption.READ);
      ByteBuffer bytes = ch.map(FileChannel.MapMode.READ_ONLY, region.fileOffset(), region.length());
      return new ShmMapping(bytes, ch, region.fileOffset(), region.length(), region.slot(), key);
    } catch (IOException e) {
      closeQuietly(ch);
      if (!connection.isOpen()) {
        throw new PeerClosedException("connection to " + connection.peer() + " closed while mapping a region");
      }
      if (e instanceof NoSuchFileException) {
        throw new RegionRevokedException("the peer's backing file is gone: " + region.path());
      }
      throw new TransportException("cannot map the peer's region: " + e.getMessage(), e);
    }
  }

  private static void closeQuietly(FileChannel ch) {
    if (ch != null) {
      try {
        ch.close();
      } catch (IOException ignored) {
        // read-only descriptor
      }
    }
  }

  private CompletableFuture<Void> copy(ShmMapping m, ReadRequest r) {
    try {
      if (!connection.isOpen()) {
        throw new PeerClosedException("connection to " + connection.peer() + " is closed");
      }
      if (!m.tryAcquire()) {
        throw new RegionRevokedException("region was revoked by its owner");
      }
      try {
        copyAcquired(m, r);
      } finally {
        m.release();
      }
      return CompletableFuture.completedFuture(null);
    } catch (TransportException | RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private void copyAcquired(ShmMapping m, ReadRequest r) throws TransportException {
    checkLive(m);
    long end = r.remoteOffset() + r.length();
    if (end < 0 || end > m.length()) {
      throw new ReadOutOfBoundsException("READ [" + r.remoteOffset() + ", +" + r.length()
          + ") outside region of " + m.length() + " bytes");
    }
    try {
      if (!m.fileCovers(end)) {
        drop(m);
        throw new RegionRevokedException("the peer's backing file shrank below the registered region");
      }
    } catch (IOException e) {
      throw new TransportException("cannot check the peer's backing file: " + e.getMessage(), e);
    }
    if (!(r.local() instanceof Region local) || !local.tryRetain()) {
      throw new IllegalArgumentException("destination is not a live region of this transport");
    }
    try {
      ByteBuffer dst = local.buffer();
      dst.limit((int) (r.localOffset() + r.length())).position((int) r.localOffset());
      ByteBuffer src = m.bytes();
      src.limit((int) end).position((int) r.remoteOffset());
      dst.put(src);
    } finally {
      local.release();
    }
    checkLive(m);
  }

  private void checkLive(ShmMapping m) throws RegionRevokedException {
    if (!isLive(m)) {
      drop(m);
      throw new RegionRevokedException("region was revoked by its owner");
    }
  }

  private boolean isLive(ShmMapping m) {
    return (long) ShmArena.LONGS.getVolatile(slots, m.slot() * 8) == m.key();
  }

  private void drop(ShmMapping m) {
    CompletableFuture<ShmMapping> f = mappings.get(m.key());
    if (f != null && f.getNow(null) == m) {
      mappings.remove(m.key(), f);
    }
    m.drop();
  }

  /** Releases the mappings of regions the peer has revoked since they were mapped. */
  @Override
  public void sweep() {
    for (CompletableFuture<ShmMapping> f : mappings.values()) {
      ShmMapping m = f.getNow(null);
      if (m != null && !isLive(m)) {
        drop(m);
      }
    }
  }

  /** Releases every mapping; later READs fail because the connection is closed. */
  @Override
  public void close() {
    closed = true;
    for (CompletableFuture<ShmMapping> f : mappings.values()) {
      ShmMapping m = f.getNow(null);
      if (m != null) {
        m.drop();
      }
    }
    mappings.clear();
    // The slot table stays mapped until collected: a copy racing this close may still read it.
  }
}
