package io.sluice.transport.verbs.rc;

/** A posted work request waiting for its completion, which the node routes here by id. */
interface WorkRequest {
  /** The id the work request was posted with. */
  long wrId();

  /** Called once on a completion thread; {@code byteLength} is meaningful for successful receives. */
  void completed(int status, int byteLength);
}
