package io.sluice.flight.client;

import io.sluice.flight.TableReader;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.pojo.Schema;

/** An ordinary Flight DoGet stream as a {@link TableReader}. Not thread safe. */
final class GrpcTableReader implements TableReader {
  private final FlightStream stream;

  GrpcTableReader(FlightStream stream) {
    this.stream = stream;
  }

  @Override
  public Schema getSchema() {
    return stream.getSchema();
  }

  @Override
  public VectorSchemaRoot getRoot() {
    return stream.getRoot();
  }

  @Override
  public boolean next() {
    return stream.next();
  }

  @Override
  public DictionaryProvider getDictionaryProvider() {
    return stream.getDictionaryProvider();
  }

  @Override
  public String dataPath() {
    return "grpc";
  }

  @Override
  public void close() {
    try {
      stream.close();
    } catch (Exception e) {
      throw CallStatus.INTERNAL.withDescription("closing the stream failed: " + e).withCause(e).toRuntimeException();
    }
  }
}
