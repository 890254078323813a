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
import io.sluice.transport.carrier.CarrierConnection;
import io.sluice.transport.carrier.PeerPath;
import io.sluice.transport.region.Region;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * READs from a same-host peer through shared memory: the peer's backing file of a key is mapped
 * once (asked for over the carrier connection, an OPEN of {@link ShmMessages}), then each READ is a bounds check, a check
 * of the peer's revocation slot, a copy, and the slot check again. The peer's threads do nothing
 * per READ. A file in the peer's arena is mapped only as {@link ShmFiles#openInArena} allows (a
 * peer that names anything else there fails the READ); a registered file elsewhere only as {@link
 * ShmFiles#openUnderRoot} allows below this side's trusted roots, and is otherwise READ over the
 * carrier, where the peer serves its own mapping. Mappings of revoked regions are released by {@link #sweep()} (run by the transport's
 * timer) and all of them when the connection closes ({@link #close()}). Thread safe.
 */
public final class ShmPeer implements PeerPath {
  private static final Logger LOG = LoggerFactory.getLogger(ShmPeer.class);

  private final CarrierConnection connection;
  private final Path arena;
  private final List<Path> trustedFileRoots;
  private final MappedByteBuffer slots;
  /** Per key: its mapping, or empty when the peer serves it over the carrier only. */
  private final Map<Long, CompletableFuture<Optional<ShmMapping>>> mappings = new ConcurrentHashMap<>();
  private final AtomicBoolean refusalLogged = new AtomicBoolean();
  private volatile boolean closed;

  private ShmPeer(CarrierConnection connection, Path arena, List<Path> trustedFileRoots, MappedByteBuffer slots) {
    this.connection = connection;
    this.arena = arena;
    this.trustedFileRoots = List.copyOf(trustedFileRoots);
    this.slots = slots;
  }

  /**
   * Asks the peer for its arena and checks that this process sees the same folder and may trust
   * it ({@link ShmFiles#checkArena}). Empty if the peer has none, it lives on another host, or it
   * is not a folder of this user with mode 0700: READs then stay on the carrier.
   *
   * @param trustedFileRoots folders below which the peer's registered files may be mapped
   */
  public static Optional<ShmPeer> attach(CarrierConnection connection, long timeoutNanos, List<Path> trustedFileRoots)
      throws TransportException {
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
    try {
      Path dir = Path.of(info.directory());
      ShmFiles.checkArena(dir);
      byte[] token = new byte[ShmArena.TOKEN_LENGTH];
      try (FileChannel ch = ShmFiles.openInArena(dir, dir.resolve(ShmArena.TOKEN_FILE))) {
        if (ch.size() != token.length || ch.read(ByteBuffer.wrap(token), 0) != token.length
            || !Arrays.equals(token, info.token())) {
          return Optional.empty();
        }
      }
      try (FileChannel ch = ShmFiles.openInArena(dir, dir.resolve(ShmArena.SLOTS_FILE))) {
        if (ch.size() != (long) ShmArena.SLOTS * 8) {
          return Optional.empty();
        }
        return Optional.of(new ShmPeer(connection, dir, trustedFileRoots, ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size())));
      }
    } catch (IOException | InvalidPathException | SecurityException e) {
      return Optional.empty(); // another host, or not ours to trust: READs stay on the carrier
    }
  }

  @Override
  public CompletableFuture<Void> read(ReadRequest r) {
    CompletableFuture<Optional<ShmMapping>> m = mapping(r.remote().key());
    if (m.isDone() && !m.isCompletedExceptionally()) {
      return readThrough(m, m.join(), r);
    }
    return m.thenCompose(mapping -> readThrough(m, mapping, r));
  }

  /**
   * A read-only slice of the peer's mapped region: the view holds the mapping (it is unmapped only
   * after the view closes, even when the region is revoked or the connection closes). Empty for a
   * region this side READs over the carrier.
   */
  @Override
  public CompletableFuture<Optional<RemoteView>> view(RemoteDescriptor remote, long remoteOffset, long length) {
    CompletableFuture<Optional<ShmMapping>> m = mapping(remote.key());
    if (m.isDone() && !m.isCompletedExceptionally()) {
      return viewOf(m.join(), remoteOffset, length);
    }
    return m.thenCompose(mapping -> viewOf(mapping, remoteOffset, length));
  }

  private CompletableFuture<Optional<ShmMapping>> mapping(long key) {
    CompletableFuture<Optional<ShmMapping>> m = mappings.get(key);
    if (m == null) {
      CompletableFuture<Optional<ShmMapping>> mine = new CompletableFuture<>();
      m = mappings.putIfAbsent(key, mine);
      if (m == null) {
        m = mine;
        open(key, mine);
      }
    }
    return m;
  }

  private CompletableFuture<Optional<RemoteView>> viewOf(Optional<ShmMapping> mapping, long offset, long length) {
    if (mapping.isEmpty()) {
      return CompletableFuture.completedFuture(Optional.empty());
    }
    ShmMapping m = mapping.get();
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

  /**
   * Copies from the mapping, or READs over the carrier; a failed carrier READ forgets the key
   * (its region is most likely gone), so keys of freed file regions do not pile up here.
   */
  private CompletableFuture<Void> readThrough(CompletableFuture<Optional<ShmMapping>> entry,
      Optional<ShmMapping> mapping, ReadRequest r) {
    if (mapping.isPresent()) {
      return copy(mapping.get(), r);
    }
    CompletableFuture<Void> read = connection.readOverCarrier(List.of(r)).get(0);
    read.whenComplete((x, e) -> {
      if (e != null) {
        mappings.remove(r.remote().key(), entry);
      }
    });
    return read;
  }

  /**
   * Whether READs of {@code key} are copies from a mapping: false before the key was opened and
   * when its region is READ over the carrier.
   */
  @Override
  public boolean reaches(long key) {
    CompletableFuture<Optional<ShmMapping>> f = mappings.get(key);
    return f != null && f.isDone() && !f.isCompletedExceptionally() && f.join().isPresent();
  }

  /**
   * Asks the peer for the key's backing file and maps it; a region the peer keeps out of shared
   * memory, or a registered file this side does not trust, is read over the carrier. The map
   * entry goes if this fails.
   */
  private void open(long key, CompletableFuture<Optional<ShmMapping>> result) {
    connection.control(ShmMessages.SERVICE, ShmMessages.open(key)).whenComplete((reply, error) -> {
      try {
        if (error != null) {
          Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
          if (cause instanceof TransportUnavailableException) {
            result.complete(Optional.empty());
            return;
          }
          throw cause;
        }
        Optional<ShmMapping> mapping = map(ShmMessages.decodeLocation(reply), key);
        if (closed) {
          mapping.ifPresent(ShmMapping::drop);
        }
        result.complete(mapping);
      } catch (Throwable t) {
        mappings.remove(key, result);
        result.completeExceptionally(t);
      }
    });
  }

  private Optional<ShmMapping> map(ShmArena.Location region, long key) throws TransportException {
    if (region.slot() >= ShmArena.SLOTS || region.length() > Integer.MAX_VALUE) {
      throw new ProtocolException("shm REGION out of range");
    }
    Path file;
    try {
      file = Path.of(region.path());
    } catch (InvalidPathException e) {
      throw new ProtocolException("refused the peer's shm region: " + e.getMessage());
    }
    if (!arena.equals(file.getParent())) {
      Optional<FileChannel> registered = openRegisteredFile(file);
      return registered.isEmpty() ? Optional.empty() : Optional.of(mapOpened(registered.get(), region, key));
    }
    FileChannel ch;
    try {
      ch = ShmFiles.openInArena(arena, file);
    } catch (NoSuchFileException e) {
      if (!connection.isOpen()) {
        throw new PeerClosedException("connection to " + connection.peer() + " closed while mapping a region");
      }
      throw new RegionRevokedException("the peer's backing file is gone: " + region.path());
    } catch (IOException e) {
      throw new ProtocolException("refused the peer's shm region: " + e.getMessage());
    }
    return Optional.of(mapOpened(ch, region, key));
  }

  /**
   * Opens a file the peer registered outside its arena, if it lies below a trusted root and passes
   * {@link ShmFiles#openUnderRoot}; empty (READs of it go over the carrier) otherwise. The first
   * refusal of a file below a root is logged: it means a link, a foreign owner or a folder others
   * may write, in the peer's files or in the roots' set-up.
   */
  private Optional<FileChannel> openRegisteredFile(Path file) {
    try {
      return ShmFiles.openUnderRoot(trustedFileRoots, file);
    } catch (IOException e) {
      if (refusalLogged.compareAndSet(false, true)) {
        LOG.warn("Not mapping a file registered by {}, READing it over the carrier: {} (logged once per connection)",
            connection.peer(), e.getMessage());
      } else {
        LOG.debug("Not mapping a file registered by {}: {}", connection.peer(), e.getMessage());
      }
      return Optional.empty();
    }
  }

  private ShmMapping mapOpened(FileChannel ch, ShmArena.Location region, long key) throws TransportException {
    try {
      ByteBuffer bytes = ch.map(FileChannel.MapMode.READ_ONLY, region.fileOffset(), region.length());
      return new ShmMapping(bytes, ch, region.fileOffset(), region.length(), region.slot(), key);
    } catch (IOException e) {
      closeQuietly(ch);
      if (!connection.isOpen()) {
        throw new PeerClosedException("connection to " + connection.peer() + " closed while mapping a region");
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
    CompletableFuture<Optional<ShmMapping>> f = mappings.get(m.key());
    if (f != null && f.getNow(Optional.empty()).orElse(null) == m) {
      mappings.remove(m.key(), f);
    }
    m.drop();
  }

  /** Releases the mappings of regions the peer has revoked since they were mapped. */
  @Override
  public void sweep() {
    for (CompletableFuture<Optional<ShmMapping>> f : mappings.values()) {
      f.getNow(Optional.empty()).filter(m -> !isLive(m)).ifPresent(this::drop);
    }
  }

  /** Releases every mapping; later READs fail because the connection is closed. */
  @Override
  public void close() {
    closed = true;
    for (CompletableFuture<Optional<ShmMapping>> f : mappings.values()) {
      f.getNow(Optional.empty()).ifPresent(ShmMapping::drop);
    }
    mappings.clear();
    // The slot table stays mapped until collected: a copy racing this close may still read it.
  }
}
