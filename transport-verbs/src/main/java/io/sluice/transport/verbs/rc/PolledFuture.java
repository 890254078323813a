package io.sluice.transport.verbs.rc;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A future whose waiting caller polls the node's completion queues itself for up to the
 * node's busy-poll time before it blocks: the completion that finishes it is then handled on
 * the caller's own thread, with no wake-up of the completion thread and no hand-off between
 * threads. Futures derived from it ({@code thenApply}, {@code whenComplete}, ...) wait the
 * same way. With a busy-poll time of 0 it is a plain {@link CompletableFuture}.
 *
 * <p>Thread safe, as {@link CompletableFuture}.
 */
public final class PolledFuture<T> extends CompletableFuture<T> {
  private final CompletionQueues queues;
  private final long pollNanos;

  PolledFuture(CompletionQueues queues, long pollNanos) {
    this.queues = queues;
    this.pollNanos = pollNanos;
  }

  @Override
  public <U> CompletableFuture<U> newIncompleteFuture() {
    return new PolledFuture<>(queues, pollNanos);
  }

  @Override
  public T get() throws InterruptedException, ExecutionException {
    poll(pollNanos);
    return super.get();
  }

  @Override
  public T get(long timeout, TimeUnit unit) throws InterruptedException, ExecutionException, TimeoutException {
    long budget = unit.toNanos(timeout);
    long started = System.nanoTime();
    poll(Math.min(budget, pollNanos));
    return super.get(Math.max(0, budget - (System.nanoTime() - started)), TimeUnit.NANOSECONDS);
  }

  @Override
  public T join() {
    poll(pollNanos);
    return super.join();
  }

  /** Drains the completion queues on this thread until done or {@code nanos} passed. */
  private void poll(long nanos) {
    if (nanos <= 0 || isDone()) {
      return;
    }
    long end = System.nanoTime() + nanos;
    while (!isDone() && System.nanoTime() - end < 0) {
      if (queues.tryDrainAll() == 0) {
        Thread.onSpinWait();
      }
    }
  }
}
