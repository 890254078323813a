package io.sluice.hadoop.rpc;

import io.sluice.transport.AuthenticationFailedException;
import io.sluice.transport.PeerClosedException;
import io.sluice.transport.RemoteHandlerException;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportTimeoutException;
import io.sluice.transport.TransportUnavailableException;
import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * Turns transport failures into the IOExceptions a stock Hadoop client throws for the same
 * event, so retry policies ({@code RetryPolicies}, failover proxies) treat them alike: a peer that
 * went away is an {@link EOFException}, a connection that cannot be made a {@link
 * ConnectException}, a deadline a {@link SocketTimeoutException}. The transport exception is kept
 * as the cause. Stateless.
 */
final class CallFailures {
  private CallFailures() {}

  static IOException translate(Throwable t, String what) {
    while ((t instanceof ExecutionException || t instanceof CompletionException) && t.getCause() != null) {
      t = t.getCause();
    }
    if (t instanceof IOException io && !(t instanceof TransportException)) {
      return io;
    }
    IOException mapped;
    if (t instanceof PeerClosedException) {
      mapped = new EOFException(what + ": the connection closed (" + t.getMessage() + ")");
    } else if (t instanceof TransportTimeoutException) {
      mapped = new SocketTimeoutException(what + ": " + t.getMessage());
    } else if (t instanceof TransportUnavailableException || t instanceof java.net.SocketException) {
      mapped = new ConnectException(what + ": " + t.getMessage());
    } else if (t instanceof AuthenticationFailedException) {
      mapped = new IOException(what + ": transport authentication failed (" + t.getMessage() + ")");
    } else if (t instanceof RemoteHandlerException) {
      mapped = new IOException(what + ": the server refused the message (" + t.getMessage() + ")");
    } else {
      mapped = new IOException(what + ": " + t);
    }
    mapped.initCause(t);
    return mapped;
  }

  /** A failure to open a connection: a {@link ConnectException} unless it was authentication. */
  static IOException connectFailure(Throwable t, String what) {
    IOException io = translate(t, what);
    if (io instanceof ConnectException || io.getCause() instanceof AuthenticationFailedException) {
      return io;
    }
    ConnectException c = new ConnectException(io.getMessage());
    c.initCause(io.getCause() != null ? io.getCause() : io);
    return c;
  }
}
