package org.apache.spark.shuffle.rdma;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.apache.spark.ExecutorAllocationClient;
import org.apache.spark.SparkContext;
import org.apache.spark.SparkContext$;
import org.apache.spark.rpc.RpcCallContext;
import org.apache.spark.rpc.RpcEnv;
import org.apache.spark.rpc.ThreadSafeRpcEndpoint;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Option;
import scala.PartialFunction;
import scala.runtime.AbstractPartialFunction;
import scala.runtime.BoxedUnit;

/**
 * Driver-side RPC endpoint where each executor registers its transport address once and reducers
 * look up the executors they read from, and ask which of them are gone (with the external shuffle
 * service, map outputs outlive their executor). Only addresses pass through here, never per-block data.
 * Messages are those of {@link AddressBookMessage}. Thread safe (Spark also delivers messages of
 * a {@link ThreadSafeRpcEndpoint} one at a time).
 */
final class AddressBookEndpoint implements ThreadSafeRpcEndpoint {
  static final String NAME = "SluiceShuffleAddressBook";
  private static final Logger LOG = LoggerFactory.getLogger(AddressBookEndpoint.class);

  private final RpcEnv rpcEnv;
  private final Predicate<String> isActive;
  private final Map<String, AddressBookMessage.Entry> entries = new ConcurrentHashMap<>();

  /**
   * @param isActive whether the driver still counts an executor as active (not removed, not being
   *     removed or decommissioned); answers "gone" requests
   */
  AddressBookEndpoint(RpcEnv rpcEnv, Predicate<String> isActive) {
    this.rpcEnv = rpcEnv;
    this.isActive = isActive;
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
          context.reply(answer(text));
        } catch (RuntimeException e) {
          context.sendFailure(e);
        }
        @SuppressWarnings("unchecked")
        B1 unit = (B1) BoxedUnit.UNIT;
        return unit;
      }
    };
  }

  /** The reply to one request; public to the package so tests can check the protocol directly. */
  String answer(String request) {
    if (request.startsWith("register ")) {
      AddressBookMessage.Entry e = AddressBookMessage.Entry.decode(request.substring("register ".length()));
      entries.put(e.executorId(), e);
      LOG.info("Shuffle transport of executor {} registered at {} ({})", e.executorId(), e.address(), e.provider());
      return AddressBookMessage.OK;
    }
    if (request.startsWith("lookup ")) {
      AddressBookMessage.Entry e = entries.get(request.substring("lookup ".length()).trim());
      return e == null ? AddressBookMessage.UNKNOWN : AddressBookMessage.found(e);
    }
    if (request.equals("gone") || request.startsWith("gone ")) {
      List<String> gone = new ArrayList<>();
      for (String id : AddressBookMessage.decodeGone(request)) {
        if (!isActive.test(id)) {
          gone.add(id);
        }
      }
      return AddressBookMessage.gone(gone);
    }
    if (request.equals("list")) {
      List<AddressBookMessage.Entry> all = new ArrayList<>(entries.values());
      all.sort((a, b) -> a.executorId().compareTo(b.executorId()));
      return AddressBookMessage.encodeList(all);
    }
    throw new IllegalArgumentException("unknown address book request '" + request + "'");
  }
}
