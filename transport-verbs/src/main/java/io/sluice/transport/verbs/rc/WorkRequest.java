package io.sluice.transport.verbs.rc;

/**
 * A work request slot of a queue pair, posted many times; the node routes each completion to
 * it by the slot number in the completion's id ({@link WorkRequestIds}). It stays known to the
 * node from when its queue pair builds it until the queue pair is destroyed, so routing
 * allocates nothing.
 */
interface WorkRequest {
  /** The slot number: the low bits of every id the work request is posted with. */
  long slot();

  /**
   * Called on the thread that drained the completion queue (its completion thread or a caller
   * waiting on it; one at a time per queue) with the completion's full {@code wrId}; {@code
   * byteLength} is meaningful for successful receives. A completion for a slot that is not
   * posted (flushed after a failure), or for an earlier use of it, is ignored.
   */
  void completed(long wrId, int status, int byteLength);

  /** The queue pair the slot belongs to, failed when handling one of its completions throws. */
  RdmaQueuePair owner();
}
