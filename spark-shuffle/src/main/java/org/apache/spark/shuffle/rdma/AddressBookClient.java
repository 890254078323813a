package org.apache.spark.shuffle.rdma;

import io.sluice.spark.shuffle.protocol.AddressBookMessage;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.rpc.RpcTimeout;
import scala.concurrent.duration.FiniteDuration;
import scala.reflect.ClassTag$;
import scala.reflect.ClassTag;

/**
 * An executor's view of the driver's {@link AddressBookEndpoint}: registers this executor's
 * transport once and looks up peers, asking the driver at most once per peer that is found (found
 * entries are cached for the life of the executor; executor ids are never reused). Whether a peer
 * is gone is asked again each time until the answer is yes.
 *
 * <p>Thread safe.
 */
final class AddressBookClient {
  private static final ClassTag<String> STRING = ClassTag$.MODULE$.apply(String.class);

  private final RpcEndpointRef driver;
  private final RpcTimeout timeout;
  private final Map<String, AddressBookMessage.Entry> cache = new ConcurrentHashMap<>();
  private final Set<String> knownGone = ConcurrentHashMap.newKeySet();

  AddressBookClient(RpcEndpointRef driver, long timeoutMs) {
    this.driver = driver;
    this.timeout = new RpcTimeout(
        new FiniteDuration(timeoutMs, TimeUnit.MILLISECONDS), RdmaShuffleOption.LOOKUP_TIMEOUT.key());
  }

  void register(AddressBookMessage.Entry self) {
    String reply = driver.askSync(AddressBookMessage.register(self), timeout, STRING);
    if (!AddressBookMessage.OK.equals(reply)) {
      throw new IllegalStateException("driver refused the shuffle transport registration: " + reply);
    }
    cache.put(self.executorId(), self);
  }

  /** The transport endpoint of an executor, or empty if it has none (it runs Spark's shuffle). */
  Optional<AddressBookMessage.Entry> lookup(String executorId) {
    AddressBookMessage.Entry cached = cache.get(executorId);
    if (cached != null) {
      return Optional.of(cached);
    }
    String reply = driver.askSync(AddressBookMessage.lookup(executorId), timeout, STRING);
    Optional<AddressBookMessage.Entry> entry = AddressBookMessage.decodeLookupReply(reply);
    entry.ifPresent(e -> cache.put(executorId, e));
    return entry;
  }

  /**
   * Those of {@code executorIds} that the driver no longer counts as active. Asks the driver about
   * the ones not already known to be gone (at most one request); being gone is final, so those
   * answers are kept.
   */
  Set<String> goneAmong(Collection<String> executorIds) {
    Set<String> gone = new LinkedHashSet<>();
    Set<String> ask = new LinkedHashSet<>();
    for (String id : executorIds) {
      if (knownGone.contains(id)) {
        gone.add(id);
      } else {
        ask.add(id);
      }
    }
    if (!ask.isEmpty()) {
      Set<String> answer = AddressBookMessage.decodeGone(driver.askSync(AddressBookMessage.gone(ask), timeout, STRING));
      knownGone.addAll(answer);
      gone.addAll(answer);
    }
    return gone;
  }

  /** Every registered executor, for reports. */
  List<AddressBookMessage.Entry> list() {
    return AddressBookMessage.decodeList(driver.askSync(AddressBookMessage.list(), timeout, STRING));
  }
}
