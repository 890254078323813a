package io.sluice.perf.transport;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Waits for transport futures with a deadline, turning every failure into an {@link IOException}. */
final class Await {
  private Await() {}

  static <T> T get(CompletableFuture<T> future, Duration timeout, String what) throws IOException {
    try {
      return future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof IOException io) {
        throw new IOException(what + " failed: " + io.getMessage(), io);
      }
      throw new IOException(what + " failed: " + cause, cause);
    } catch (TimeoutException e) {
      future.cancel(false);
      throw new IOException(what + " did not complete within " + timeout.toMillis() + " ms", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      InterruptedIOException ie = new InterruptedIOException("interrupted while waiting for " + what);
      ie.initCause(e);
      throw ie;
    }
  }
}
