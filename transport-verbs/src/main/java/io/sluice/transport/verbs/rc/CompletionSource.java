package io.sluice.transport.verbs.rc;

import java.io.IOException;

/**
 * What a {@link CompletionPoller} drives: a completion queue that can be polled, armed to
 * raise an event for its next completion, and waited on. {@link DeviceCompletions} is the
 * device's; tests give their own.
 *
 * <p>{@link #poll} is called by one thread at a time (the poller serializes it); {@link #arm}
 * and {@link #await} only by the poller's own thread.
 */
interface CompletionSource extends AutoCloseable {
  /**
   * Hands up to one batch of queued completions to {@code handler}; returns how many, so a
   * full batch means more may wait.
   */
  int poll(CompletionPoller.Handler handler) throws IOException;

  /** The batch size of {@link #poll}. */
  int batch();

  /** Asks for an event at the next completion (completions already queued raise none). */
  void arm() throws IOException;

  /** Waits up to {@code millis} for an event and consumes it; false if none came. */
  boolean await(int millis) throws IOException;

  /** Frees the queue; called once, when no thread polls it any more. */
  @Override
  void close() throws IOException;
}
