package io.sluice.flight.plane;

import io.sluice.flight.memory.Staging;
import io.sluice.flight.protocol.DataPlaneProtocol;
import io.sluice.flight.protocol.DataPlaneProtocol.BodyFrame;
import io.sluice.flight.protocol.DataPlaneProtocol.BodyRef;
import io.sluice.flight.protocol.DataPlaneProtocol.SchemaFrame;
import io.sluice.flight.protocol.IpcBodies;
import io.sluice.transport.Checksums;
import io.sluice.transport.TransportException;
import java.util.concurrent.TimeoutException;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowMessage;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The sending side of a data-plane stream: copies each body into a region of its {@link Staging}
 * (readable by the one peer of the stream) and sends a frame with the IPC metadata, where the
 * body lies and its CRC32C. The peer READs it and acknowledges; {@link Staging} holds the window. Used by one
 * producing thread; acknowledgements arrive through {@link #acknowledge} from another.
 */
public final class BodySender {
  private final Staging staging;
  private final FrameLink link;
  private long bodyBytes;

  public BodySender(Staging staging, FrameLink link) {
    this.staging = staging;
    this.link = link;
  }

  /** Sends the schema in its IPC message form (dictionary-encoded fields with their value types). */
  public void sendSchema(Schema messageSchema) {
    link.send(DataPlaneProtocol.encode(new SchemaFrame(IpcBodies.schemaMetadata(messageSchema))));
  }

  public void send(ArrowDictionaryBatch dictionary)
      throws TimeoutException, InterruptedException, TransportException {
    send(dictionary, dictionary.getDictionary(), true);
  }

  public void send(ArrowRecordBatch batch) throws TimeoutException, InterruptedException, TransportException {
    send(batch, batch, false);
  }

  private void send(ArrowMessage message, ArrowRecordBatch body, boolean dictionary)
      throws TimeoutException, InterruptedException, TransportException {
    long length = IpcBodies.bodyLength(body);
    Staging.Slot slot = staging.acquire(length);
    IpcBodies.writeBody(body, slot.region().buffer());
    byte[] metadata = IpcBodies.metadata(message);
    // The server checks what it READ against this before storing the body.
    int crc = Checksums.crc32c(slot.region().buffer(), 0, (int) length);
    link.send(DataPlaneProtocol.encode(new BodyFrame(dictionary, slot.sequence(), metadata,
        new BodyRef(slot.region().descriptor(), 0, length), crc)));
    bodyBytes += length;
  }

  /** Takes an acknowledgement frame from the peer. */
  public void acknowledge(DataPlaneProtocol.AckFrame ack) {
    staging.acknowledge(ack.sequence());
  }

  /** Waits until the peer has READ every body sent. */
  public void awaitAcknowledged() throws TimeoutException, InterruptedException {
    staging.awaitAcknowledged();
  }

  public long bodyBytes() {
    return bodyBytes;
  }
}
