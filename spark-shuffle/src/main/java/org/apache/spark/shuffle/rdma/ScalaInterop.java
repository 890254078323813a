package org.apache.spark.shuffle.rdma;

import java.util.concurrent.CompletableFuture;
import org.apache.spark.util.ThreadUtils;

/**
 * The few conversions between Java and Scala types this module needs, written against the part of
 * the Scala library that is the same in 2.12 and 2.13: {@code scala.jdk.javaapi} exists only in
 * 2.13, and {@code Iterator.empty()} is typed differently in the two. Every Spark line builds these
 * same sources, so nothing else here may name a Scala-version-specific class.
 *
 * <p>Stateless; safe from any thread.
 */
final class ScalaInterop {
  private ScalaInterop() {}

  /** A Scala view of {@code it}; reading either one advances both. */
  static <T> scala.collection.Iterator<T> asScala(java.util.Iterator<T> it) {
    return new scala.collection.AbstractIterator<T>() {
      @Override
      public boolean hasNext() {
        return it.hasNext();
      }

      @Override
      public T next() {
        return it.next();
      }
    };
  }

  /** The elements of {@code first}, then those of {@code second}; neither is read before it is needed. */
  static <T> scala.collection.Iterator<T> concat(scala.collection.Iterator<? extends T> first,
      scala.collection.Iterator<? extends T> second) {
    return new scala.collection.AbstractIterator<T>() {
      @Override
      public boolean hasNext() {
        return first.hasNext() || second.hasNext();
      }

      @Override
      public T next() {
        return first.hasNext() ? first.next() : second.next();
      }
    };
  }

  /** An iterator with no elements, typed for the caller. */
  static <T> scala.collection.Iterator<T> emptyIterator() {
    return asScala(java.util.Collections.emptyIterator());
  }

  /** A Java view of {@code seq}'s elements, in order. */
  static <T> Iterable<T> asJava(scala.collection.Seq<T> seq) {
    return () -> new java.util.Iterator<>() {
      private final scala.collection.Iterator<T> it = seq.iterator();

      @Override
      public boolean hasNext() {
        return it.hasNext();
      }

      @Override
      public T next() {
        return it.next();
      }
    };
  }

  /**
   * A future completed with {@code f}'s outcome. The completion runs on the thread that completes
   * {@code f}, so callers must not do blocking work in dependent stages.
   */
  static <T> CompletableFuture<T> asJava(scala.concurrent.Future<T> f) {
    CompletableFuture<T> out = new CompletableFuture<>();
    f.onComplete(result -> result.isSuccess() ? out.complete(result.get())
        : out.completeExceptionally(result.failed().get()), ThreadUtils.sameThread());
    return out;
  }
}
