package io.sluice.hadoop.rpc;

import io.sluice.hadoop.rpc.RpcFrames.Body;
import io.sluice.hadoop.rpc.RpcFrames.Inline;
import io.sluice.hadoop.rpc.RpcFrames.Remote;
import io.sluice.hadoop.rpc.RpcFrames.Response;
import io.sluice.transport.Connection;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.memory.RegisteredAllocator;
import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.hadoop.ipc.RemoteException;
import org.apache.hadoop.ipc.protobuf.ProtobufRpcEngine2Protos.RequestHeaderProto;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.thirdparty.protobuf.CodedInputStream;
import org.apache.hadoop.thirdparty.protobuf.CodedOutputStream;
import org.apache.hadoop.thirdparty.protobuf.Message;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A client's connection to one server for one (address, protocol, user), as a stock client's
 * connection: calls of every proxy with that key share it. It holds an authenticated transport
 * connection to the server's transport, or nothing when the server offers none (calls then take
 * the stock path). It is retired after sitting idle, or when its transport connection fails.
 *
 * <p>Thread safe: calls run concurrently on one transport connection (the transport multiplexes
 * them by correlation id); {@link #acquire()} and {@link #retireIfIdle} agree under this object's
 * lock so that an idle connection is never closed under a call that just took it.
 */
final class ServerConnection implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ServerConnection.class);
  private static final long REQUEST_IDLE_BYTES = 16L << 20;
  private static final long[] NONE = new long[0];

  private final ClientContext context;
  private final ClientContext.Key key;
  private final Connection connection; // null: the server has no transport, use the stock path
  private final long maxIdleNanos;
  /** Request bodies this connection's server READs, registered for that node alone. Null on the stock path. */
  private final RegisteredAllocator requestBodies;
  /** What every call frame of this connection says about its caller. Null on the stock path. */
  private final RpcFrames.CallerFields callerFields;
  private int inFlight; // guarded by this
  private long lastUsedNanos; // guarded by this
  private boolean retired; // guarded by this
  /** Request headers by method name. */
  private final Map<String, RequestHeaderProto> requestHeaders = new ConcurrentHashMap<>();
  /** Response bodies READ and not yet released; the next call or {@link #flushReleases} names them. */
  private final ConcurrentLinkedQueue<Long> readBodies = new ConcurrentLinkedQueue<>();

  ServerConnection(ClientContext context, ClientContext.Key key, Connection connection, long maxIdleMs) {
    this.context = context;
    this.key = key;
    this.connection = connection;
    this.maxIdleNanos = TimeUnit.MILLISECONDS.toNanos(maxIdleMs);
    this.lastUsedNanos = System.nanoTime();
    this.requestBodies = connection == null ? null
        : RpcRegions.poolFor(context.memory(), "request bodies to " + key.address(), REQUEST_IDLE_BYTES,
            connection.peerNode());
    UserGroupInformation real = key.user().getRealUser();
    this.callerFields = connection == null ? null
        : new RpcFrames.CallerFields(context.clientId(), key.protocolName(), key.user().getUserName(),
            real == null ? null : real.getUserName(), context.callerHost(),
            context.transport().localAddress().port());
  }

  /** True when the server offers no transport and calls take the stock path. */
  boolean isStockPath() {
    return connection == null;
  }

  /** Takes the connection for one call; false if it was retired (get a new one). */
  synchronized boolean acquire() {
    if (retired || (connection != null && !connection.isOpen())) {
      retired = true;
      return false;
    }
    inFlight++;
    return true;
  }

  /** Ends a call begun with {@link #acquire()}. */
  synchronized void done() {
    inFlight--;
    lastUsedNanos = System.nanoTime();
  }

  /** Retires and closes the connection if no call used it for the idle time; true if it did. */
  boolean retireIfIdle(long nowNanos) {
    synchronized (this) {
      boolean idle = inFlight == 0 && nowNanos - lastUsedNanos > maxIdleNanos;
      boolean broken = connection != null && !connection.isOpen();
      if (!idle && !broken) {
        return false;
      }
      retired = true;
    }
    close();
    return true;
  }

  /**
   * One call on an acquired connection: encodes the request, sends it (its body by reference when
   * large), waits for the answer at most {@code timeoutMs}, and decodes the response message or
   * throws the server's exception as a {@link RemoteException}.
   */
  Message call(int callId, int retryCount, String method, long clientVersion, Message request,
      Message responsePrototype, long timeoutMs) throws IOException {
    String what = "call " + key.protocolName() + "." + method + " to " + key.address();
    RequestHeaderProto header = requestHeader(method, clientVersion);
    int size = delimitedSize(header) + delimitedSize(request);
    if (size > context.settings().maxDataLength()) {
      throw new IOException(what + ": request of " + size + " bytes exceeds ipc.maximum.data.length");
    }
    RegisteredRegion requestRegion = null;
    boolean answered = false;
    try {
      ByteBuffer message;
      if (size > context.settings().readThreshold()) {
        requestRegion = allocate(requestBodies, size, what);
        // Encoded into an array and copied in bulk: protobuf writes a direct buffer a byte at a time.
        byte[] bytes = new byte[size];
        write(header, request, CodedOutputStream.newInstance(bytes));
        requestRegion.buffer().put(bytes);
        message = RpcFrames.encodeCall(callId, retryCount, callerFields, takeReadBodies(),
            new Remote(requestRegion.descriptor(), size, 0));
      } else {
        // The body is encoded straight into the frame, after the caller's fields encoded once.
        message = RpcFrames.inlineCall(callId, retryCount, callerFields, takeReadBodies(), size);
        write(header, request, CodedOutputStream.newInstance(message.array(),
            message.arrayOffset() + message.position(), size));
        message.position(message.position() + size).flip();
      }
      ByteBuffer reply = await(connection.request(message), timeoutMs, what);
      answered = true; // the server READs a request body before it answers
      Response response = RpcFrames.decodeResponse(reply);
      if (!response.isOk()) {
        if (response.fatal()) {
          retireNow();
        }
        throw new RemoteException(response.errorClass(), response.errorMessage());
      }
      return read(response.body(), responsePrototype, what);
    } finally {
      if (requestRegion != null) {
        if (answered) {
          requestBodies.release(requestRegion);
        } else {
          requestBodies.free(requestRegion); // the server may still READ it: revoke, never reuse
        }
      }
    }
  }

  private Message read(Body body, Message prototype, String what) throws IOException {
    if (body instanceof Inline inline) {
      return parse(inline.bytes(), prototype);
    }
    Remote remote = (Remote) body;
    if (remote.length() > context.settings().maxDataLength()) {
      throw new IOException(what + ": response of " + remote.length() + " bytes exceeds ipc.maximum.data.length");
    }
    RegisteredRegion landing = allocate(context.landing(), remote.length(), what);
    boolean landed = false;
    try {
      await(connection.read(remote.descriptor(), 0, landing, 0, remote.length()),
          context.settings().ioTimeoutMs(), what + " (reading the response)");
      landed = true;
      ByteBuffer bytes = landing.buffer();
      bytes.limit(remote.length());
      return parse(bytes, prototype);
    } finally {
      if (landed) {
        context.landing().release(landing);
      } else {
        context.landing().free(landing); // a READ that failed or timed out may still land: never reuse it
      }
      readBodies.add(remote.id());
    }
  }

  private long[] takeReadBodies() {
    if (readBodies.isEmpty()) {
      return NONE;
    }
    long[] ids = new long[RpcFrames.MAX_RELEASED];
    int n = 0;
    Long id;
    while (n < ids.length && (id = readBodies.poll()) != null) {
      ids[n++] = id;
    }
    return java.util.Arrays.copyOf(ids, n);
  }

  /**
   * Sends the releases no call has carried yet (called periodically), so the server frees response
   * bodies soon even when no further call comes.
   */
  void flushReleases() {
    while (connection != null && !readBodies.isEmpty() && connection.isOpen()) {
      long[] ids = takeReadBodies();
      connection.request(RpcFrames.encode(new RpcFrames.Release(ids))).whenComplete((ok, t) -> {
        if (t != null) {
          LOG.debug("release of {} response bodies failed; the server frees them at its deadline", ids.length, t);
        }
      });
    }
  }

  private <T> T await(CompletableFuture<T> future, long timeoutMs, String what) throws IOException {
    try {
      return future.get(timeoutMs, TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      // The request stays in flight until the server answers or the transport's deadline passes,
      // so flow control still counts it; the late answer is dropped.
      SocketTimeoutException timeout = new SocketTimeoutException(what + ": no answer within " + timeoutMs + " ms");
      timeout.initCause(e);
      throw timeout;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException(what + ": interrupted");
    } catch (ExecutionException e) {
      if (connection != null && !connection.isOpen()) {
        retireNow();
      }
      throw CallFailures.translate(e, what);
    }
  }

  /**
   * A region of {@code pool}. A pool closes with its connection or client, so a call that finds
   * it closed fails as it would on the closed connection itself.
   */
  private static RegisteredRegion allocate(RegisteredAllocator pool, long length, String what) throws IOException {
    try {
      return pool.allocate(length);
    } catch (IllegalStateException e) {
      if (!pool.isClosed()) {
        throw e;
      }
      EOFException closed = new EOFException(what + ": the connection closed (" + e.getMessage() + ")");
      closed.initCause(e);
      throw closed;
    }
  }

  private synchronized void retireNow() {
    retired = true;
  }

  /** The request header of a method's calls; built once per method, as it never changes. */
  private RequestHeaderProto requestHeader(String method, long clientVersion) {
    RequestHeaderProto header = requestHeaders.get(method);
    if (header == null || header.getClientProtocolVersion() != clientVersion) {
      header = RequestHeaderProto.newBuilder().setMethodName(method)
          .setDeclaringClassProtocolName(key.protocolName()).setClientProtocolVersion(clientVersion).build();
      requestHeaders.put(method, header);
    }
    return header;
  }

  private static int delimitedSize(Message m) {
    int n = m.getSerializedSize();
    return CodedOutputStream.computeUInt32SizeNoTag(n) + n;
  }

  private static void write(Message header, Message request, CodedOutputStream out) throws IOException {
    out.writeUInt32NoTag(header.getSerializedSize());
    header.writeTo(out);
    out.writeUInt32NoTag(request.getSerializedSize());
    request.writeTo(out);
    out.flush();
  }

  private static Message parse(ByteBuffer bytes, Message prototype) throws IOException {
    CodedInputStream in = CodedInputStream.newInstance(bytes);
    int length = in.readRawVarint32();
    int limit = in.pushLimit(length);
    Message message = prototype.getParserForType().parseFrom(in);
    in.popLimit(limit);
    return message;
  }

  @Override
  public void close() {
    synchronized (this) {
      retired = true;
    }
    if (connection != null) {
      flushReleases();
      connection.close();
      requestBodies.shutdown(); // a call still under way frees its region when it ends
    }
  }
}
