package io.sluice.flight.client;

import io.sluice.flight.TableWriter;
import org.apache.arrow.flight.AsyncPutListener;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;

/** An ordinary Flight DoPut as a {@link TableWriter}. Not thread safe. */
final class GrpcTableWriter implements TableWriter {
  private final FlightClient.ClientStreamListener listener;
  private boolean completed;

  GrpcTableWriter(FlightClient flight, FlightDescriptor descriptor, VectorSchemaRoot root,
      DictionaryProvider dictionaries) {
    this.listener = flight.startPut(descriptor, root, dictionaries, new AsyncPutListener());
  }

  @Override
  public void putNext() {
    listener.putNext();
  }

  @Override
  public void completed() {
    completed = true;
    listener.completed();
    listener.getResult();
  }

  @Override
  public String dataPath() {
    return "grpc";
  }

  @Override
  public void close() {
    if (!completed) {
      completed = true;
      listener.error(new java.util.concurrent.CancellationException("the writer closed the put"));
    }
  }
}
