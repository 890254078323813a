package org.apache.spark.shuffle.rdma;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.spark.shuffle.FetchFailedException;
import org.apache.spark.storage.BlockManagerId;

/**
 * Turns transport failures into Spark's {@link FetchFailedException}, which makes the scheduler
 * rerun the stage that wrote the lost output. Spark's exception is checked in Java terms but is
 * thrown through Scala iterators, which declare nothing, so it is rethrown unchecked here, as
 * Scala code would. Stateless.
 */
final class FetchFailures {
  private FetchFailures() {}

  /** Throws a FetchFailedException naming the block; declared to return so callers can {@code throw}. */
  static RuntimeException fail(BlockManagerId location, int shuffleId, long mapId, int mapIndex,
      int reduceId, String message, Throwable cause) {
    // The constructor also marks the running task as fetch-failed, as Spark's own reader does.
    FetchFailedException e =
        new FetchFailedException(location, shuffleId, mapId, mapIndex, reduceId, message, cause);
    throw FetchFailures.<RuntimeException>sneaky(e);
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> T sneaky(Throwable t) throws T {
    throw (T) t;
  }

  /**
   * Waits for a transport future with a deadline; a timeout is a failure like any other.
   *
   * @throws Throwable the future's failure, unwrapped, or a {@link TimeoutException}
   */
  static <T> T await(CompletableFuture<T> future, long deadlineMs) throws Throwable {
    try {
      return future.get(deadlineMs, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw e.getCause() == null ? e : e.getCause();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw e;
    }
  }
}
