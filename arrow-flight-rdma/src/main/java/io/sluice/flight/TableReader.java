package io.sluice.flight;

import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A stream of record batches from a Flight server, read like Flight's own {@code FlightStream}:
 * {@link #next()} loads the next batch into {@link #getRoot()}, whose contents stay valid until
 * the next call. Which path the bodies took is {@link #dataPath()}: "verbs", "tcp" or "shm" when
 * they were READ over the transport, "grpc" when the stream is ordinary Flight.
 *
 * <p>Not thread safe: one reading thread. Closing before the end cancels the stream; errors
 * arrive as {@code FlightRuntimeException} with Flight's status codes.
 */
public interface TableReader extends AutoCloseable {
  Schema getSchema();

  VectorSchemaRoot getRoot();

  /** Loads the next batch; false at the end of the stream. */
  boolean next();

  /** Dictionaries of dictionary-encoded columns. */
  DictionaryProvider getDictionaryProvider();

  /** "verbs", "tcp", "shm" or "grpc". */
  String dataPath();

  @Override
  void close();
}
