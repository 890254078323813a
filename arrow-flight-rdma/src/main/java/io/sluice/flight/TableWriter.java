package io.sluice.flight;

/**
 * A put of record batches to a Flight server, used like Flight's own {@code ClientStreamListener}:
 * fill the root given at start, call {@link #putNext()}, and finally {@link #completed()}, which
 * returns once the server has stored everything (or throws its error). {@link #dataPath()} says
 * whether the server READ the bodies ("verbs", "tcp", "shm") or received them over gRPC ("grpc").
 *
 * <p>Not thread safe: one writing thread. Closing before {@link #completed()} cancels the put.
 */
public interface TableWriter extends AutoCloseable {
  /** Sends the root's current rows as one batch. */
  void putNext();

  /** Ends the put and waits for the server's verdict. */
  void completed();

  String dataPath();

  @Override
  void close();
}
