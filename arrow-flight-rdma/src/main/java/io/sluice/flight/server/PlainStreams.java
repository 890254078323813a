package io.sluice.flight.server;

import io.sluice.flight.FlightOption;
import io.sluice.flight.plane.BoundedNext;
import io.sluice.flight.protocol.IpcBodies;
import io.sluice.flight.table.FlightTable;
import io.sluice.flight.table.RegisteredBodies;
import io.sluice.flight.table.TableRegistry;
import io.sluice.transport.TransportException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.arrow.compression.CommonsCompressionFactory;
import org.apache.arrow.flight.BackpressureStrategy;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightProducer.ServerStreamListener;
import org.apache.arrow.flight.FlightProducer.StreamListener;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.util.DictionaryUtility;

/**
 * Ordinary Flight streams, for every client: DoGet loads each stored batch into a root
 * (decompressing if the table is compressed, since Flight clients expect plain buffers) and
 * sends it as Flight does, waiting for gRPC's flow control; DoPut stores the incoming batches
 * as a table. Stateless; a get runs on a server thread, a put on its gRPC thread.
 */
final class PlainStreams {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(PlainStreams.class);
  private PlainStreams() {}

  /** Sends the table; {@code backpressure} was registered with the listener by the caller. */
  static void get(ServerState state, FlightTable table, ServerStreamListener listener,
      BackpressureStrategy backpressure) {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(table.schema(), state.allocator());
         Dictionaries dictionaries = Dictionaries.load(table, state.allocator())) {
      listener.start(root, dictionaries.provider());
      VectorLoader loader = new VectorLoader(root, CommonsCompressionFactory.INSTANCE);
      long sent = 0; // body bytes, as the data plane counts them: dictionaries (sent by start) and batches
      for (ArrowDictionaryBatch d : table.dictionaries()) {
        sent += IpcBodies.bodyLength(d.getDictionary());
      }
      long waitMs = TimeUnit.NANOSECONDS.toMillis(state.ackTimeoutNanos());
      for (ArrowRecordBatch batch : table.batches()) {
        BackpressureStrategy.WaitResult r = backpressure.waitForListener(waitMs);
        if (r == BackpressureStrategy.WaitResult.CANCELLED) {
          return;
        }
        if (r != BackpressureStrategy.WaitResult.READY) {
          state.metrics().plainGet(sent, false);
          listener.error(CallStatus.TIMED_OUT.withDescription(
              "the client took no data for " + waitMs + " ms").toRuntimeException());
          return;
        }
        if (table.codec() == CompressionUtil.CodecType.NO_COMPRESSION) {
          loader.load(batch);
        } else {
          try (ArrowRecordBatch framed = asReceived(batch, state.allocator())) {
            loader.load(framed); // decompresses
          }
        }
        listener.putNext();
        sent += IpcBodies.bodyLength(batch);
      }
      state.metrics().plainGet(sent, true);
      listener.completed();
    } catch (RuntimeException | Error e) {
      // An error too (a class missing from the server's class path, memory): the client gets an
      // answer rather than a stream that never ends.
      state.metrics().plainGet(0, false);
      LOG.warn("Serving a table to a Flight client failed", e);
      listener.error(CallStatus.INTERNAL.withDescription("serving the table failed: " + e).withCause(e)
          .toRuntimeException());
      if (e instanceof VirtualMachineError fatal) {
        throw fatal;
      }
    }
  }

  /**
   * The batch as a reader of its IPC encoding would see it (buffers sliced from one body): Arrow's
   * loader decompresses buffers in that form, the form the data plane delivers.
   */
  private static ArrowRecordBatch asReceived(ArrowRecordBatch batch, BufferAllocator allocator) {
    long length = IpcBodies.bodyLength(batch);
    ArrowBuf body = allocator.buffer(length);
    try {
      IpcBodies.writeBody(batch, body.nioBuffer(0, (int) length));
      body.writerIndex(length);
    } catch (RuntimeException e) {
      body.close();
      throw e;
    }
    return IpcBodies.recordBatch(IpcBodies.metadata(batch), body);
  }

  static Runnable put(ServerState state, FlightStream stream, StreamListener<PutResult> ack) {
    return () -> {
      String name = TableRegistry.nameOf(stream.getDescriptor()).orElse(null);
      if (name == null) {
        ack.onError(CallStatus.INVALID_ARGUMENT.withDescription(
            "DoPut needs a path descriptor with one element, the table's name").toRuntimeException());
        return;
      }
      PutBudget.Put budget;
      try {
        state.checkPutsAllowed();
        state.tables().checkPutMayStore(name);
        budget = state.putBudget().begin(name);
      } catch (FlightRuntimeException e) {
        ack.onError(e);
        return;
      }
      try (budget; TableSink sink = new TableSink(state)) {
        VectorSchemaRoot root = stream.getRoot();
        long bytes = 0;
        long waitNanos = state.ackTimeoutNanos();
        while (nextWithin(stream, waitNanos)) {
          bytes += metadataBytes(root);
          for (org.apache.arrow.vector.FieldVector v : root.getFieldVectors()) {
            bytes += v.getBufferSize();
          }
          state.checkPutSize(budget, bytes);
          sink.add(root, stream.getDictionaryProvider());
        }
        state.storePut(name, budget, sink.build(root, stream.getDictionaryProvider()));
        state.metrics().plainPut(bytes);
        ack.onCompleted();
      } catch (FlightRuntimeException e) {
        ack.onError(e);
      } catch (TransportException | RuntimeException e) {
        ack.onError(CallStatus.INTERNAL.withDescription("storing the put failed: " + e).withCause(e)
            .toRuntimeException());
      }
    };
  }

  /**
   * The writer's next batch, waited for at most {@code waitNanos}.
   *
   * @throws FlightRuntimeException TIMED_OUT, naming the key, when none came in time
   */
  private static boolean nextWithin(FlightStream stream, long waitNanos) {
    try {
      return BoundedNext.next(stream, waitNanos);
    } catch (TimeoutException e) {
      throw CallStatus.TIMED_OUT.withDescription("the writer sent no batch for " + waitNanos / 1_000_000 + " ms ("
          + FlightOption.ACK_TIMEOUT_MS.key() + "); nothing was stored").withCause(e).toRuntimeException();
    }
  }

  /**
   * About what a batch's IPC metadata costs once stored: a message header, and a field node and
   * two buffer entries (16 bytes each) per vector, children included.
   */
  private static long metadataBytes(VectorSchemaRoot root) {
    long vectors = 0;
    java.util.ArrayDeque<org.apache.arrow.vector.ValueVector> todo = new java.util.ArrayDeque<>(root.getFieldVectors());
    while (!todo.isEmpty()) {
      org.apache.arrow.vector.ValueVector v = todo.poll();
      vectors++;
      if (v instanceof FieldVector f) {
        todo.addAll(f.getChildrenFromFields());
      }
    }
    return 128 + 48 * vectors;
  }

  /**
   * Where a plain put's batches go: straight into registered memory when the data plane is on
   * (so the stored table costs one copy of the data), else into a table of Arrow buffers.
   */
  private static final class TableSink implements AutoCloseable {
    private final ServerState state;
    private RegisteredBodies.Collector registered;
    private FlightTable.Builder plain;

    TableSink(ServerState state) {
      this.state = state;
    }

    /** The dictionaries are complete once the first batch arrived, so both sinks start then. */
    void add(VectorSchemaRoot root, DictionaryProvider dictionaries) throws TransportException {
      start(root, dictionaries);
      if (registered != null) {
        registered.add(root);
      } else {
        plain.add(root);
      }
    }

    FlightTable build(VectorSchemaRoot root, DictionaryProvider dictionaries) throws TransportException {
      start(root, dictionaries);
      return registered != null ? registered.build() : plain.build();
    }

    private void start(VectorSchemaRoot root, DictionaryProvider dictionaries) throws TransportException {
      if (registered == null && plain == null) {
        if (state.transport().isPresent()) {
          registered = new RegisteredBodies.Collector(state.transport().get(), state.allocator(), root.getSchema(),
              dictionaries);
        } else {
          plain = FlightTable.builder(root.getSchema(), dictionaries);
        }
      }
    }

    @Override
    public void close() {
      if (registered != null) {
        registered.close();
      }
      if (plain != null) {
        plain.close();
      }
    }
  }

  /** The dictionary vectors of one plain stream, loaded from the table's dictionary batches. */
  private record Dictionaries(DictionaryProvider.MapDictionaryProvider provider, List<FieldVector> vectors)
      implements AutoCloseable {
    static Dictionaries load(FlightTable table, BufferAllocator allocator) {
      Map<Long, Dictionary> byId = new HashMap<>();
      for (Field f : table.messageSchema().getFields()) {
        DictionaryUtility.toMemoryFormat(f, allocator, byId);
      }
      List<FieldVector> vectors = new ArrayList<>();
      DictionaryProvider.MapDictionaryProvider provider = new DictionaryProvider.MapDictionaryProvider();
      byId.values().forEach(d -> vectors.add(d.getVector()));
      try {
        for (ArrowDictionaryBatch d : table.dictionaries()) {
          Dictionary dictionary = byId.get(d.getDictionaryId());
          if (dictionary == null) {
            throw new IllegalStateException("dictionary " + d.getDictionaryId() + " is not in the schema");
          }
          FieldVector v = dictionary.getVector();
          VectorSchemaRoot holder = new VectorSchemaRoot(List.of(v.getField()), List.of(v), 0);
          new VectorLoader(holder, CommonsCompressionFactory.INSTANCE).load(d.getDictionary());
        }
      } catch (RuntimeException e) {
        vectors.forEach(FieldVector::close);
        throw e;
      }
      byId.values().forEach(provider::put);
      return new Dictionaries(provider, vectors);
    }

    @Override
    public void close() {
      vectors.forEach(FieldVector::close);
    }
  }
}
