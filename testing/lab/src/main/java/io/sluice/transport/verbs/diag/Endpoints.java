package io.sluice.transport.verbs.diag;

import com.ibm.disni.RdmaActiveEndpointGroup;
import com.ibm.disni.RdmaEndpointFactory;
import com.ibm.disni.RdmaServerEndpoint;
import com.ibm.disni.verbs.RdmaCmId;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Deadline-bounded wrappers around DiSNI's endpoint API for the checks. DiSNI's
 * RdmaServerEndpoint.accept and RdmaEndpoint.connect wait without a time limit (connect
 * even ignores rdma_cm's error events), so each runs on a helper thread and the endpoint is
 * closed when the deadline passes. DiSNI declares {@code throws Exception} on bind and
 * connect; these adapters narrow it to IOException.
 */
final class Endpoints {

  private Endpoints() {}

  static RdmaActiveEndpointGroup<CheckEndpoint> newGroup() throws IOException {
    RdmaActiveEndpointGroup<CheckEndpoint> group = new RdmaActiveEndpointGroup<>(1000, false, 64, 4, 128);
    RdmaEndpointFactory<CheckEndpoint> factory = new RdmaEndpointFactory<>() {
      @Override
      public CheckEndpoint createEndpoint(RdmaCmId id, boolean serverSide) throws IOException {
        return new CheckEndpoint(group, id, serverSide);
      }
    };
    group.init(factory);
    return group;
  }

  static void bind(RdmaServerEndpoint<CheckEndpoint> server, InetSocketAddress address) throws IOException {
    try {
      server.bind(address, 10);
    } catch (IOException | RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IOException("bind " + address + " failed", e);
    }
  }

  static CheckEndpoint accept(RdmaServerEndpoint<CheckEndpoint> server, long deadline) throws IOException {
    return within(server::accept, deadline, "accept", () -> closeQuietly(server::close));
  }

  static void connect(CheckEndpoint endpoint, InetSocketAddress address, long deadline) throws IOException {
    int timeoutMs = (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
    within(() -> {
      endpoint.connect(address, timeoutMs);
      return endpoint;
    }, deadline, "connect to " + address, () -> closeQuietly(endpoint::close));
  }

  private static <T> T within(Callable<T> action, long deadline, String what, Runnable onTimeout)
      throws IOException {
    ExecutorService helper = Executors.newSingleThreadExecutor();
    try {
      Future<T> result = helper.submit(action);
      return result.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      onTimeout.run();
      throw new IOException(what + " did not complete before the deadline", e);
    } catch (ExecutionException e) {
      throw new IOException(what + " failed", e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted during " + what, e);
    } finally {
      helper.shutdownNow();
    }
  }

  @FunctionalInterface
  interface Closer {
    void close() throws IOException, InterruptedException;
  }

  /**
   * Waits at most {@code timeoutNanos} for the server side's task; its failure, a timeout or an
   * interrupt becomes an {@link IOException} that says which.
   */
  static void awaitServerSide(Future<?> serverSide, long timeoutNanos) throws IOException {
    try {
      serverSide.get(Math.max(0, timeoutNanos), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      throw new IOException("server side failed", e.getCause());
    } catch (TimeoutException e) {
      throw new IOException("server side did not finish in time", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
  }

  static void closeQuietly(Closer closer) {
    try {
      closer.close();
    } catch (IOException | RuntimeException e) {
      // Closing after the check's verdict; nothing left to report to. DiSNI's group close throws a
      // NullPointerException for an endpoint that never got its queue pair (a connect that did
      // not complete): that must not hide the check's own failure.
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
