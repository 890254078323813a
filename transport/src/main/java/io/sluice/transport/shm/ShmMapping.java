package io.sluice.transport.shm;

import io.sluice.transport.NodeAddress;
import io.sluice.transport.RegionTruncatedException;
import io.sluice.transport.region.DirectMemory;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A reader's mapping of one region of a same-host peer, with the file it maps kept open. The
 * transport itself reads the region with positional reads of that file ({@link #read}), which a
 * file shortened under it ends early instead of faulting; only the bytes it hands out as views
 * ({@link #bytes()}) are read through the mapping, by their user. Copies and views hold it with
 * {@link #tryAcquire()} and {@link #release()}; once {@link #drop()} is called (the region was
 * revoked, the connection closed, or the file became unreadable), the last holder unmaps it and
 * closes the file, so memory and disk space of freed peer regions come back at once and no read
 * can touch unmapped memory. Thread safe.
 */
final class ShmMapping {
  private final ByteBuffer bytes;
  private final FileChannel file;
  private final String path;
  private final NodeAddress peer;
  private final long fileOffset;
  private final long length;
  private final int slot;
  private final long key;
  /** Whether the backing memfd's size is sealed: no process can shorten it, so neither reads nor views can fault. */
  private final boolean sealed;
  /** Holders; -1 once unmapped. */
  private final AtomicInteger users = new AtomicInteger();
  private volatile boolean dropped;

  ShmMapping(ByteBuffer bytes, FileChannel file, String path, NodeAddress peer, long fileOffset, long length, int slot,
      long key, boolean sealed) {
    this.bytes = bytes;
    this.sealed = sealed;
    this.file = file;
    this.path = path;
    this.peer = peer;
    this.fileOffset = fileOffset;
    this.length = length;
    this.slot = slot;
    this.key = key;
  }

  long length() {
    return length;
  }

  int slot() {
    return slot;
  }

  long key() {
    return key;
  }

  boolean sealed() {
    return sealed;
  }

  /**
   * A view of the mapped bytes; valid only while acquired. Touching them faults if the file is
   * shortened, which a sealed memfd cannot be.
   */
  ByteBuffer bytes() {
    return bytes.duplicate();
  }

  /**
   * Checks that the backing file still covers the whole region, before a read of its bytes
   * {@code [offset, offset + count)} begins.
   *
   * @throws RegionTruncatedException if something shortened it
   * @throws IOException if its size cannot be read (the file was closed: see {@link #isReadable})
   */
  void checkCovers(long offset, long count) throws IOException {
    if (sealed) {
      return; // its size was checked when it was mapped and cannot change
    }
    long size = ShmFiles.sizeOf(file);
    if (size < fileOffset + length) {
      throw truncated(offset, count, size);
    }
  }

  /**
   * Copies bytes {@code [offset, offset + dst.remaining())} of the region into {@code dst}'s
   * remaining bytes; valid only while acquired. A sealed memfd is copied from the mapping, which
   * nothing can shorten; a file with positional reads (see {@link ShmFiles#readAt}), once its size
   * is checked ({@link #checkCovers}), since a copy from a mapping of a file cut under it faults.
   *
   * @throws RegionTruncatedException if the file does not cover the region, or ends before the
   *     bytes asked for when it is cut during the read; {@code dst}'s position then says how many
   *     arrived
   * @throws IOException if the file cannot be read (it was closed: see {@link #isReadable})
   */
  void read(long offset, ByteBuffer dst) throws IOException {
    int wanted = dst.remaining();
    if (sealed) {
      dst.put(bytes.slice(Math.toIntExact(offset), wanted));
      return;
    }
    checkCovers(offset, wanted);
    if (ShmFiles.readAt(file, fileOffset + offset, dst) < wanted) {
      throw truncated(offset, wanted, ShmFiles.sizeOf(file));
    }
  }

  /**
   * Whether the backing file is still open: an interrupt that arrives while a reader's thread is in
   * a read of it closes it, and then no read of this mapping can succeed; the reader drops it, and
   * the next READ maps the region afresh.
   */
  boolean isReadable() {
    return file.isOpen();
  }

  private RegionTruncatedException truncated(long offset, long count, long size) {
    return new RegionTruncatedException(peer, key, path, fileOffset + length, offset, count, size);
  }

  boolean tryAcquire() {
    while (true) {
      int n = users.get();
      if (n < 0 || dropped) {
        return false;
      }
      if (users.compareAndSet(n, n + 1)) {
        return true;
      }
    }
  }

  void release() {
    if (users.decrementAndGet() == 0 && dropped) {
      unmapIfUnused();
    }
  }

  void drop() {
    dropped = true;
    unmapIfUnused();
  }

  private void unmapIfUnused() {
    if (users.compareAndSet(0, -1)) {
      DirectMemory.free(bytes);
      try {
        file.close();
      } catch (IOException ignored) {
        // read-only descriptor; nothing is lost
      }
    }
  }
}
