package io.sluice.transport.shm;

import io.sluice.transport.PeerClosedException;
import io.sluice.transport.ProtocolException;
import io.sluice.transport.ReadOutOfBoundsException;
import io.sluice.transport.ReadRequest;
import io.sluice.transport.RegionRevokedException;
import io.sluice.transport.RegionTruncatedException;
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
import java.nio.ByteOrder;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
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
 * READs from a same-host peer through shared memory: the peer's backing file of a key is opened
 * and mapped once (asked for over the carrier connection, an OPEN of {@link ShmMessages}), then
 * each READ is a bounds check, a check of the peer's revocation slot and of the file's size, a
 * positional read of the file, and the slot check again. The peer's threads do nothing per READ.
 *
 * <p>Nothing here reads through a mapping: any process of the same user may shorten the peer's
 * files, and a read of a mapping past its file's end faults (the JVM reports it as an {@code
 * InternalError}, late), where a positional read ends early and fails the READ with a {@link
 * RegionTruncatedException}. The revocation slots are read from the table's file the same way.
 * Only a view's {@link RemoteView#buffer()} is the mapping, touched by the view's user: safe when
 * the region is a sealed memfd (the peer's allocations where its kernel and library allow: no
 * process can shorten it), exposed to such a cut when it is a file.
 *
 * <p>A file in the peer's arena is mapped only as {@link ShmFiles#openInArena} allows (a peer
 * that names anything else there fails the READ); a registered file elsewhere only as {@link
 * ShmFiles#openUnderRoot} allows below this side's trusted roots, and a sealed memfd only as {@link
 * ShmFiles#openMemfd} allows; a registered file or memfd refused so is READ over the carrier, where
 * the peer serves its own mapping. Mappings of revoked regions are released by {@link #sweep()}
 * (run by the transport's timer) and all of them when the connection closes ({@link #close()}).
 * Thread safe.
 */
public final class ShmPeer implements PeerPath {
  private static final Logger LOG = LoggerFactory.getLogger(ShmPeer.class);

  private final CarrierConnection connection;
  private final Path arena;
  /** The arena owner's pid, whose /proc descriptors name its sealed regions. */
  private final long ownerPid;
  /** What the names of the arena's memfds start with (its token). */
  private final String memfdNamePrefix;
  private final List<Path> trustedFileRoots;
  /** The revocation table's file, read at each check; opened again if an interrupt closed it. */
  private volatile FileChannel slots;
  /** Per key: its mapping, or empty when the peer serves it over the carrier only. */
  private final Map<Long, CompletableFuture<Optional<ShmMapping>>> mappings = new ConcurrentHashMap<>();
  private final AtomicBoolean fileRefusalLogged = new AtomicBoolean();
  private final AtomicBoolean memfdRefusalLogged = new AtomicBoolean();
  private volatile boolean closed;

  private ShmPeer(CarrierConnection connection, Path arena, String memfdNamePrefix, List<Path> trustedFileRoots,
      FileChannel slots) {
    this.connection = connection;
    this.arena = arena;
    this.ownerPid = ShmArena.ownerPid(arena);
    this.memfdNamePrefix = memfdNamePrefix;
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
      FileChannel slots = ShmFiles.openInArena(dir, dir.resolve(ShmArena.SLOTS_FILE));
      if (slots.size() != (long) ShmArena.SLOTS * 8) {
        slots.close();
        return Optional.empty();
      }
      return Optional.of(new ShmPeer(connection, dir, ShmArena.memfdNamePrefix(info.token()), trustedFileRoots,
          slots));
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
   * A read-only slice of the peer's mapped region: the view holds the mapping and its file (they
   * are let go only after the view closes, even when the region is revoked or the connection
   * closes). The file must cover the range when the view is taken; each {@link RemoteView#read}
   * is a positional read of it. Empty for a region this side READs over the carrier.
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
        checkCovers(m, offset, length);
      } catch (TransportException | RuntimeException e) {
        m.release();
        throw e;
      }
      ByteBuffer bytes = m.bytes().limit((int) end).position((int) offset).slice().asReadOnlyBuffer();
      return CompletableFuture.completedFuture(Optional.of(new MappedView(bytes, m, offset)));
    } catch (TransportException | RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** A view holding one acquisition of its mapping until closed. */
  private final class MappedView implements RemoteView {
    private final ByteBuffer bytes;
    private final ShmMapping mapping;
    /** Where the view starts in the region. */
    private final long start;
    private final AtomicBoolean open = new AtomicBoolean(true);

    MappedView(ByteBuffer bytes, ShmMapping mapping, long start) {
      this.bytes = bytes;
      this.mapping = mapping;
      this.start = start;
    }

    @Override
    public ByteBuffer buffer() {
      return bytes.duplicate();
    }

    @Override
    public long length() {
      return bytes.capacity();
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws TransportException {
      if (!open.get()) {
        throw new IllegalStateException("the view is closed");
      }
      if (offset < 0 || offset + dst.remaining() > bytes.capacity()) {
        throw new ReadOutOfBoundsException("read [" + offset + ", +" + dst.remaining() + ") outside a view of "
            + bytes.capacity() + " bytes");
      }
      readFile(mapping, start + offset, dst);
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
    if (ShmFiles.isProcDescriptor(file)) {
      return mapSealed(file, region, key);
    }
    if (!arena.equals(file.getParent())) {
      Optional<FileChannel> registered = openRegisteredFile(file);
      return registered.isEmpty() ? Optional.empty() : Optional.of(mapOpened(registered.get(), region, key, false));
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
    return Optional.of(mapOpened(ch, region, key, false));
  }

  /**
   * Maps a region the peer allocated as a sealed memfd, which it names by its {@code /proc/<pid>/fd/<n>}
   * entry, if {@link ShmFiles#openMemfd} allows; empty (READs of it go over the carrier) when the
   * entry is not there or not this side's to open (a reader in another pid namespace, or one that may
   * not read the peer's descriptors), or is not a memfd of the arena sealed against shrinking. The
   * carrier loses nothing: the peer serves its own bytes, and answers a READ of a region it revoked
   * as revoked. The first such refusal is logged.
   */
  private Optional<ShmMapping> mapSealed(Path file, ShmArena.Location region, long key) throws TransportException {
    ShmFiles.Opened opened;
    try {
      opened = ShmFiles.openMemfd(file, ownerPid, memfdNamePrefix);
    } catch (IOException e) {
      if (!connection.isOpen()) {
        throw new PeerClosedException("connection to " + connection.peer() + " closed while mapping a region");
      }
      if (memfdRefusalLogged.compareAndSet(false, true)) {
        LOG.warn("Not mapping a memfd of {}, READing it over the carrier: {} (logged once per connection)",
            connection.peer(), describe(e));
      } else {
        LOG.debug("Not mapping a memfd of {}: {}", connection.peer(), describe(e));
      }
      return Optional.empty();
    }
    return Optional.of(mapOpened(opened.channel(), region, key, opened.sealed()));
  }

  /** What went wrong opening a peer's file: the JDK's file exceptions name the file, not the failure. */
  private static String describe(IOException e) {
    if (e instanceof NoSuchFileException) {
      return e.getMessage() + " is not there";
    }
    if (e instanceof AccessDeniedException) {
      return e.getMessage() + " may not be opened by this process";
    }
    return e.getMessage();
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
      if (fileRefusalLogged.compareAndSet(false, true)) {
        LOG.warn("Not mapping a file registered by {}, READing it over the carrier: {} (logged once per connection)",
            connection.peer(), e.getMessage());
      } else {
        LOG.debug("Not mapping a file registered by {}: {}", connection.peer(), e.getMessage());
      }
      return Optional.empty();
    }
  }

  /** Maps the opened file's region, which the file must cover now; {@code sealed}: its size cannot change. */
  private ShmMapping mapOpened(FileChannel ch, ShmArena.Location region, long key, boolean sealed)
      throws TransportException {
    try {
      long size = ShmFiles.sizeOf(ch);
      if (size < region.fileOffset() + region.length()) {
        throw new RegionTruncatedException(connection.peer(), key, region.path(),
            region.fileOffset() + region.length(), 0, region.length(), size);
      }
      ByteBuffer bytes = ch.map(FileChannel.MapMode.READ_ONLY, region.fileOffset(), region.length());
      return new ShmMapping(bytes, ch, region.path(), connection.peer(), region.fileOffset(), region.length(),
          region.slot(), key, sealed);
    } catch (RegionTruncatedException e) {
      closeQuietly(ch);
      throw e;
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
    if (!(r.local() instanceof Region local) || !local.tryRetain()) {
      throw new IllegalArgumentException("destination is not a live region of this transport");
    }
    try {
      ByteBuffer dst = local.buffer();
      dst.limit((int) (r.localOffset() + r.length())).position((int) r.localOffset());
      readFile(m, r.remoteOffset(), dst);
    } finally {
      local.release();
    }
    checkLive(m);
  }

  /** Fails if the file no longer covers the region, for a read of {@code [offset, +count)}; dropping the mapping if so. */
  private void checkCovers(ShmMapping m, long offset, long count) throws TransportException {
    try {
      m.checkCovers(offset, count);
    } catch (RegionTruncatedException e) {
      drop(m);
      throw e;
    } catch (IOException e) {
      throw unreadable(m, e);
    }
  }

  /** Reads the region's bytes from {@code offset} into {@code dst} from the acquired mapping (see {@link ShmMapping#read}). */
  private void readFile(ShmMapping m, long offset, ByteBuffer dst) throws TransportException {
    try {
      m.read(offset, dst);
    } catch (RegionTruncatedException e) {
      drop(m);
      throw e;
    } catch (IOException e) {
      throw unreadable(m, e);
    }
  }

  /** The failure of a read or size check of a mapping's file; one that is closed is dropped, so the next READ maps it again. */
  private TransportException unreadable(ShmMapping m, IOException e) {
    if (!m.isReadable()) {
      drop(m);
    }
    return new TransportException("cannot read the backing file of region " + Long.toHexString(m.key()) + " from "
        + connection.peer() + ": " + e, e);
  }

  private void checkLive(ShmMapping m) throws TransportException {
    if (!isLive(m)) {
      drop(m);
      throw new RegionRevokedException("region was revoked by its owner");
    }
  }

  /** Whether the mapping's revocation slot still holds its key, read from the table's file. */
  private boolean isLive(ShmMapping m) throws TransportException {
    ByteBuffer slot = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder());
    try {
      if (ShmFiles.readAt(slotsFile(), m.slot() * 8L, slot) < 8) {
        throw new ProtocolException("the peer's slot table in " + arena + " was cut short (slot " + m.slot()
            + " is past its end)");
      }
    } catch (ClosedChannelException e) {
      throw new PeerClosedException("connection to " + connection.peer() + " is closed");
    } catch (IOException e) {
      throw e instanceof TransportException te ? te
          : new TransportException("cannot read the peer's slot table in " + arena + ": " + e, e);
    }
    return slot.getLong(0) == m.key();
  }

  /**
   * The revocation table's file, opened again (as {@link #attach} opened it) when an interrupt of a
   * reader's thread closed it while the peer is still attached.
   */
  private FileChannel slotsFile() throws IOException {
    FileChannel ch = slots;
    if (ch.isOpen() || closed) {
      return ch;
    }
    synchronized (this) {
      if (!slots.isOpen() && !closed) {
        slots = ShmFiles.openInArena(arena, arena.resolve(ShmArena.SLOTS_FILE));
      }
      return slots;
    }
  }

  private void drop(ShmMapping m) {
    CompletableFuture<Optional<ShmMapping>> f = mappings.get(m.key());
    if (f != null && f.getNow(Optional.empty()).orElse(null) == m) {
      mappings.remove(m.key(), f);
    }
    m.drop();
  }

  /**
   * Releases the mappings of regions the peer has revoked since they were mapped, and of those
   * whose slot cannot be read.
   */
  @Override
  public void sweep() {
    for (CompletableFuture<Optional<ShmMapping>> f : mappings.values()) {
      f.getNow(Optional.empty()).filter(m -> !isLiveOrUnknown(m)).ifPresent(this::drop);
    }
  }

  private boolean isLiveOrUnknown(ShmMapping m) {
    try {
      return isLive(m);
    } catch (PeerClosedException e) {
      return true; // close() lets go of everything
    } catch (TransportException e) {
      return false;
    }
  }

  /** Releases every mapping and the slot table's file; later READs fail because the connection is closed. */
  @Override
  public void close() {
    closed = true;
    for (CompletableFuture<Optional<ShmMapping>> f : mappings.values()) {
      f.getNow(Optional.empty()).ifPresent(ShmMapping::drop);
    }
    mappings.clear();
    closeQuietly(slots); // a READ racing this fails with PeerClosedException
  }
}
