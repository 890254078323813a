package io.sluice.transport.shm;

import io.sluice.transport.region.DirectMemory;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A reader's mapping of one region of a same-host peer. Copies hold it with {@link #tryAcquire()}
 * and {@link #release()}; once {@link #drop()} is called (the region was revoked or the connection
 * closed), the last holder unmaps it and closes the file, so memory and disk space of freed peer
 * regions come back at once and no copy can touch unmapped memory. Thread safe.
 */
final class ShmMapping {
  private final ByteBuffer bytes;
  private final FileChannel file;
  private final long fileOffset;
  private final long length;
  private final int slot;
  private final long key;
  /** Holders; -1 once unmapped. */
  private final AtomicInteger users = new AtomicInteger();
  private volatile boolean dropped;

  ShmMapping(ByteBuffer bytes, FileChannel file, long fileOffset, long length, int slot, long key) {
    this.bytes = bytes;
    this.file = file;
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

  /** A view of the mapped bytes; valid only while acquired. */
  ByteBuffer bytes() {
    return bytes.duplicate();
  }

  /** Whether the backing file still covers {@code end} bytes of the region (it may have shrunk). */
  boolean fileCovers(long end) throws IOException {
    return file.size() >= fileOffset + end;
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
