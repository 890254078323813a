package org.apache.spark.shuffle.rdma;

import io.sluice.spark.shuffle.protocol.AddressBookMessage;
import io.sluice.spark.shuffle.registry.AddressBookClient;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.apache.spark.SparkConf;
import org.apache.spark.rpc.RpcEndpointAddress;
import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.rpc.RpcEnv;
import org.apache.spark.rpc.RpcTimeout;
import scala.concurrent.duration.FiniteDuration;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * An executor's link to the driver's address book ({@link AddressBookEndpoint}): the reference to
 * the book's endpoint and, when the executor has no secret of its own, the transport secret the
 * driver hands out. On an executor both are asked for when the shuffle manager is made, without
 * waiting: Spark's RPC to the driver is up by then and the two requests cost no CPU worth
 * counting, so the first task that opens the transport finds the answers there instead of waiting
 * for them in turn. Whatever failed early is asked for again, once, when it is needed, within the
 * lookup timeout.
 *
 * <p>Thread safe.
 */
final class DriverLink {
  private static final ClassTag<String> STRING = ClassTag$.MODULE$.apply(String.class);

  private final long timeoutMs;
  private final RpcTimeout timeout;
  private final Supplier<CompletableFuture<RpcEndpointRef>> lookUp;
  private CompletableFuture<RpcEndpointRef> ref; // guarded by this
  private Optional<CompletableFuture<String>> secret; // guarded by this; empty when not wanted

  private DriverLink(Supplier<CompletableFuture<RpcEndpointRef>> lookUp, long timeoutMs,
      boolean wantSecret) {
    this.lookUp = lookUp;
    this.timeoutMs = timeoutMs;
    this.timeout = new RpcTimeout(new FiniteDuration(timeoutMs, TimeUnit.MILLISECONDS),
        RdmaShuffleOption.LOOKUP_TIMEOUT.key());
    this.ref = lookUp.get();
    this.secret = wantSecret ? Optional.of(askSecret(ref)) : Optional.empty();
  }

  /**
   * Starts looking up the driver's address book from an executor, and asking it for the secret if
   * {@code wantSecret}.
   */
  static DriverLink start(SparkConf conf, RpcEnv rpcEnv, long timeoutMs, boolean wantSecret) {
    String uri = new RpcEndpointAddress(conf.get("spark.driver.host"), conf.getInt("spark.driver.port", 7077),
        AddressBookEndpoint.NAME).toString();
    return new DriverLink(() -> ScalaInterop.asJava(rpcEnv.asyncSetupEndpointRefByURI(uri)), timeoutMs, wantSecret);
  }

  /** The link of a process that holds the book's endpoint itself (the driver, in local mode). */
  static DriverLink of(RpcEndpointRef endpoint, long timeoutMs, boolean wantSecret) {
    return new DriverLink(() -> CompletableFuture.completedFuture(endpoint), timeoutMs, wantSecret);
  }

  private CompletableFuture<String> askSecret(CompletableFuture<RpcEndpointRef> endpoint) {
    return endpoint.thenCompose(r -> ScalaInterop.asJava(r.ask(AddressBookMessage.secret(), timeout, STRING)))
        .thenApply(AddressBookClient::handedOutSecret);
  }

  /**
   * Tells the driver's book that this executor's transport is opening, without waiting: until it
   * registers or withdraws, reducers' lookups of it wait there. The future completes once the book
   * has the announcement, and fails if it refused it or did not answer within the lookup timeout.
   */
  CompletableFuture<Void> announceOpening(String executorId) {
    return tell(AddressBookMessage.opening(executorId));
  }

  /**
   * Tells the book that the announced open ended without a transport, so that lookups waiting for
   * it get their answer now; never waits. A withdrawal that is lost leaves every later lookup of
   * this executor to the book's hold time, until the driver no longer counts it as active.
   */
  void withdraw(String executorId) {
    tell(AddressBookMessage.withdraw(executorId));
  }

  private CompletableFuture<Void> tell(String request) {
    return endpointRef().thenCompose(r -> ScalaInterop.asJava(r.ask(request, timeout, STRING)))
        .thenAccept(reply -> {
          if (!AddressBookMessage.OK.equals(reply)) {
            throw new IllegalStateException("the driver's book answered '" + reply + "' to '" + request + "'");
          }
        });
  }

  /** A client of the book; waits for the endpoint's reference if it has not come yet. */
  AddressBookClient client() {
    return AddressBookEndpoint.client(await(endpointRef(), "the driver's shuffle address book"), timeoutMs);
  }

  /**
   * The secret the driver hands out; waits for the answer if it has not come yet.
   *
   * @throws IllegalStateException if the driver has none to hand out, or did not answer in time
   */
  String handedOutSecret() {
    CompletableFuture<String> answer;
    synchronized (this) {
      answer = secret.orElseGet(() -> askSecret(endpointRef()));
      if (answer.isCompletedExceptionally()) {
        answer = askSecret(endpointRef()); // the early request failed: ask once more
      }
      secret = Optional.of(answer);
    }
    return await(answer, "the transport secret from the driver");
  }

  private synchronized CompletableFuture<RpcEndpointRef> endpointRef() {
    if (ref.isCompletedExceptionally()) {
      ref = lookUp.get();
    }
    return ref;
  }

  private <T> T await(CompletableFuture<T> f, String what) {
    try {
      return f.get(timeoutMs, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for " + what, e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      throw cause instanceof IllegalStateException i ? i
          : new IllegalStateException("could not get " + what + ": " + cause, cause);
    } catch (TimeoutException e) {
      throw new IllegalStateException("no answer with " + what + " within " + timeoutMs + " ms ("
          + RdmaShuffleOption.LOOKUP_TIMEOUT.key() + ")", e);
    }
  }
}
