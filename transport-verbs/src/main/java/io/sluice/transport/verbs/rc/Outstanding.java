package io.sluice.transport.verbs.rc;

import io.sluice.transport.TransportException;

/** Work a failed queue pair still owes an answer: failed once the queue pair is destroyed. */
interface Outstanding {
  /** Completes the work's future exceptionally with {@code cause} (or its own, more precise one). */
  void fail(TransportException cause);
}
