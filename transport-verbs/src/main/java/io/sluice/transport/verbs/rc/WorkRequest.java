package io.sluice.transport.verbs.rc;

/**
 * A work request slot of a queue pair, posted many times under the one id it was built with;
 * the node routes each completion to it by that id. It stays known to the node from when its
 * queue pair builds it until the queue pair is destroyed, so routing allocates nothing.
 */
interface WorkRequest {
  /** The id the work request is posted with. */
  long wrId();

  /**
   * Called on the thread that drained the completion queue (its completion thread or a caller
   * waiting on it; one at a time per queue); {@code byteLength} is meaningful for successful
   * receives. A completion for a slot that is not posted (flushed after a failure) is ignored.
   */
  void completed(int status, int byteLength);
}
