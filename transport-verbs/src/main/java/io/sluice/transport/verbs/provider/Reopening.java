package io.sluice.transport.verbs.provider;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * A resource opened asynchronously (a queue pair, a message channel) that is opened again,
 * once, by the first caller who finds it failed or dead. Thread safe.
 */
final class Reopening<T> {
  private final AtomicReference<CompletableFuture<T>> current = new AtomicReference<>();
  private final Supplier<CompletableFuture<T>> opener;
  private final Predicate<T> alive;

  Reopening(Supplier<CompletableFuture<T>> opener, Predicate<T> alive) {
    this.opener = opener;
    this.alive = alive;
  }

  /** Opens the first one. */
  CompletableFuture<T> open() {
    CompletableFuture<T> first = opener.get();
    current.set(first);
    return first;
  }

  /** The current one, or a new one if it failed to open or died (unless {@code closed}). */
  CompletableFuture<T> get(boolean closed) {
    while (true) {
      CompletableFuture<T> f = current.get();
      boolean dead = f.isCompletedExceptionally() || (f.isDone() && !alive.test(f.join()));
      if (!dead || closed) {
        return f;
      }
      CompletableFuture<T> next = new CompletableFuture<>();
      if (current.compareAndSet(f, next)) {
        opener.get().whenComplete((t, e) -> {
          if (e != null) {
            next.completeExceptionally(e);
          } else {
            next.complete(t);
          }
        });
        return next;
      }
    }
  }

  /** Closes the current one, now or once it is open. */
  void close(Consumer<T> closer) {
    CompletableFuture<T> f = current.get();
    if (f != null) {
      f.thenAccept(closer);
    }
  }
}
