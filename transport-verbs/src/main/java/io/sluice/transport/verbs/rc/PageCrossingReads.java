package io.sluice.transport.verbs.rc;

import java.util.List;

/**
 * The fence around soft-iWARP's short READ replies. A siw responder builds the reply to a READ
 * of at most {@link #SHORT_READ_BYTES} bytes by copying the source into the reply's header
 * ({@code siw_try_1seg} in {@code siw_qp_tx.c}). When that source crosses a page boundary the
 * copy goes wrong: the first copy takes as many bytes as lie on the <em>second</em> page, and
 * the rest is copied from the start of the page the source begins on. The READ completes
 * successfully with wrong bytes from that point on (Debian's 6.1 kernel, and every siw source
 * read since siw entered the kernel; transport-verbs/README.md, "READ integrity").
 *
 * <p>A READ is therefore split at the boundary into two READs, one per page, each of which siw
 * copies right. This is applied on iWARP, where the responder may be siw; a requester cannot
 * tell which iWARP driver serves the peer. It costs one more work request for a READ of at
 * most 32 bytes whose source crosses a 4 KiB boundary. Boundaries are taken every 4 KiB of the
 * peer's virtual address, which covers every larger power-of-two page size too.
 */
public final class PageCrossingReads {

  /** The longest READ siw replies to through the broken copy (its {@code MAX_HDR_INLINE}). */
  public static final int SHORT_READ_BYTES = 32;
  /** The page boundaries a short READ must not cross: every 4 KiB of the responder's address. */
  public static final long PAGE_BYTES = 4096;

  private PageCrossingReads() {}

  /** Whether {@code read} is short and its source crosses a 4 KiB boundary. */
  public static boolean crossesPage(RdmaRead read) {
    long firstPage = read.remoteAddress() & -PAGE_BYTES;
    long lastPage = (read.remoteAddress() + read.length() - 1) & -PAGE_BYTES;
    return read.length() <= SHORT_READ_BYTES && firstPage != lastPage;
  }

  /**
   * {@code read} as the READs to post: itself, or, for a short READ whose source crosses a page
   * boundary, the part before the boundary and the part after it, landing where they would have.
   */
  public static List<RdmaRead> split(RdmaRead read) {
    if (!crossesPage(read)) {
      return List.of(read);
    }
    int first = (int) (PAGE_BYTES - (read.remoteAddress() & (PAGE_BYTES - 1)));
    return List.of(
        new RdmaRead(read.remoteAddress(), read.rkey(), read.localAddress(), read.lkey(), first),
        new RdmaRead(read.remoteAddress() + first, read.rkey(), read.localAddress() + first, read.lkey(),
            read.length() - first));
  }
}
