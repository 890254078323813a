package io.sluice.flight.plane;

import io.sluice.flight.protocol.DataPlaneProtocol;
import io.sluice.flight.protocol.DataPlaneProtocol.AckFrame;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;

/**
 * Cumulative acknowledgements of a put's bodies as their READs complete, in any order: it sends
 * one for the longest prefix of bodies READ once that prefix has grown by half the window since
 * the last one, or at once when no READ is left under way (so a writer that waits for room, or
 * for the end, is always answered). Sequences start at 0 and each is tracked once.
 *
 * <p>Thread safe: {@link #track} on the receiving thread, completions on the transport's threads.
 */
final class PutAcknowledger {
  private final FrameLink link;
  private final int every;
  private final TreeSet<Long> doneAhead = new TreeSet<>();
  private long contiguous;
  private long acknowledged;
  private int underWay;

  PutAcknowledger(FrameLink link, int window) {
    this.link = link;
    this.every = Math.max(1, window / 2);
  }

  /** Acknowledges body {@code sequence} once {@code read} completes normally; returns {@code read}. */
  CompletableFuture<Void> track(long sequence, CompletableFuture<Void> read) {
    synchronized (this) {
      underWay++;
    }
    read.whenComplete((v, e) -> {
      if (e == null) {
        done(sequence);
      } else {
        synchronized (this) {
          underWay--;
        }
      }
    });
    return read;
  }

  private void done(long sequence) {
    long ack;
    synchronized (this) {
      underWay--;
      doneAhead.add(sequence);
      while (!doneAhead.isEmpty() && doneAhead.first() == contiguous) {
        doneAhead.pollFirst();
        contiguous++;
      }
      if (contiguous == acknowledged || contiguous - acknowledged < every && underWay > 0) {
        return;
      }
      acknowledged = contiguous;
      ack = contiguous - 1;
      // Sent under the lock so that acknowledgements leave in order.
      link.send(DataPlaneProtocol.encode(new AckFrame(ack)));
    }
  }
}
