package org.apache.spark.shuffle.rdma;

import io.sluice.spark.shuffle.registry.AddressBook;
import io.sluice.spark.shuffle.registry.AddressBookClient;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.spark.ExecutorAllocationClient;
import org.apache.spark.SparkContext;
import org.apache.spark.SparkContext$;
import org.apache.spark.rpc.RpcCallContext;
import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.rpc.RpcEnv;
import org.apache.spark.rpc.RpcTimeout;
import org.apache.spark.rpc.ThreadSafeRpcEndpoint;
import scala.Option;
import scala.PartialFunction;
import scala.concurrent.duration.FiniteDuration;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;
import scala.runtime.AbstractPartialFunction;
import scala.runtime.BoxedUnit;

/**
 * Serves the driver's {@link AddressBook} over Spark's RPC: each request is a plain string, the
 * reply is the book's answer, and a malformed request fails that call only. A lookup of an
 * executor still opening is answered later, from the thread that completes it, without holding
 * the endpoint. Thread safe (Spark also delivers messages of a {@link ThreadSafeRpcEndpoint} one
 * at a time).
 */
final class AddressBookEndpoint implements ThreadSafeRpcEndpoint {
  static final String NAME = "SluiceShuffleAddressBook";
  private static final ClassTag<String> STRING = ClassTag$.MODULE$.apply(String.class);

  private final RpcEnv rpcEnv;
  private final AddressBook book;

  /**
   * @param isActive whether the driver still counts an executor as active (not removed, not being
   *     removed or decommissioned); answers "gone" requests
   * @param secret the transport secret the book hands out, if the driver made one
   * @param holdMs how long a lookup of an executor still opening waits for its registration
   */
  AddressBookEndpoint(RpcEnv rpcEnv, Predicate<String> isActive, Optional<String> secret, long holdMs) {
    this.rpcEnv = rpcEnv;
    this.book = new AddressBook(isActive, secret, holdMs);
  }

  /**
   * A client of the address book behind {@code driver} whose every request waits at most {@code
   * timeoutMs}; a timeout names the lookup timeout setting.
   */
  static AddressBookClient client(RpcEndpointRef driver, long timeoutMs) {
    RpcTimeout timeout = new RpcTimeout(
        new FiniteDuration(timeoutMs, TimeUnit.MILLISECONDS), RdmaShuffleOption.LOOKUP_TIMEOUT.key());
    return new AddressBookClient(request -> driver.askSync(request, timeout, STRING),
        request -> ScalaInterop.asJava(driver.ask(request, timeout, STRING)));
  }

  /**
   * The scheduler's view of executors, from the active SparkContext: an executor is active while
   * the scheduler backend (an {@link ExecutorAllocationClient}: standalone, YARN, Kubernetes,
   * local-cluster) holds it and is not removing it. Without such a backend (local mode) every
   * executor counts as active.
   */
  static boolean activeInScheduler(String executorId) {
    Option<SparkContext> sc = SparkContext$.MODULE$.getActive();
    if (sc.isEmpty() || !(sc.get().schedulerBackend() instanceof ExecutorAllocationClient client)) {
      return true;
    }
    return client.isExecutorActive(executorId);
  }

  /** The book it serves, for the driver's metrics source. */
  AddressBook book() {
    return book;
  }

  @Override
  public RpcEnv rpcEnv() {
    return rpcEnv;
  }

  @Override
  public PartialFunction<Object, BoxedUnit> receiveAndReply(RpcCallContext context) {
    return new AbstractPartialFunction<>() {
      @Override
      public boolean isDefinedAt(Object message) {
        return message instanceof String;
      }

      @Override
      public <A1, B1> B1 applyOrElse(A1 message, scala.Function1<A1, B1> fallback) {
        if (!(message instanceof String text)) {
          return fallback.apply(message);
        }
        try {
          book.answerAsync(text).whenComplete((reply, failure) -> {
            if (failure == null) {
              context.reply(reply);
            } else {
              context.sendFailure(failure);
            }
          });
        } catch (RuntimeException e) {
          context.sendFailure(e);
        }
        @SuppressWarnings("unchecked")
        B1 unit = (B1) BoxedUnit.UNIT;
        return unit;
      }
    };
  }
}
