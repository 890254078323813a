package io.sluice.spark.shuffle.registry;

import io.sluice.spark.shuffle.protocol.AddressBookMessage;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The driver's table of executors' shuffle transports: each executor registers its transport
 * address once, reducers look up the executors they read from and ask which of them are gone
 * (with the external shuffle service, map outputs outlive their executor). Without Spark
 * authentication it also hands out the application's transport secret, a random value the driver
 * made, to the executors that ask over Spark's RPC. Requests and replies are those of {@link
 * AddressBookMessage}; only addresses and that secret pass through here, never per-block data.
 *
 * <p>Thread safe.
 */
public final class AddressBook {
  private static final Logger LOG = LoggerFactory.getLogger(AddressBook.class);

  private final Predicate<String> isActive;
  private final Optional<String> secret;
  private final Map<String, AddressBookMessage.Entry> entries = new ConcurrentHashMap<>();
  private final Map<String, Map<String, Long>> metrics = new ConcurrentHashMap<>();

  /**
   * @param isActive whether the driver still counts an executor as active (not removed, not being
   *     removed or decommissioned); answers "gone" requests
   * @param secret the transport secret to hand out (hex digits), or empty when the executors
   *     have one of their own (Spark's, or one set explicitly)
   */
  public AddressBook(Predicate<String> isActive, Optional<String> secret) {
    this.isActive = isActive;
    this.secret = secret;
  }

  /**
   * The sum over executors of the value {@code name} had in each one's last metrics report (an
   * executor that stopped keeps its last one, so totals of a finished job stay); 0 when none
   * reported it.
   */
  public long metricTotal(String name) {
    long sum = 0;
    for (Map<String, Long> m : metrics.values()) {
      sum += m.getOrDefault(name, 0L);
    }
    return sum;
  }

  /** How many executors have reported their metrics. */
  public int reportingExecutors() {
    return metrics.size();
  }

  /** How many executors registered a transport. */
  public int registeredExecutors() {
    return entries.size();
  }

  /**
   * The reply to one request.
   *
   * @throws IllegalArgumentException for a request this book does not know, or a malformed one
   */
  public String answer(String request) {
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
    if (request.equals(AddressBookMessage.secret())) {
      return secret.map(AddressBookMessage::secretReply).orElse(AddressBookMessage.UNKNOWN);
    }
    if (request.startsWith("metrics ")) {
      AddressBookMessage.MetricsReport r = AddressBookMessage.decodeMetrics(request);
      metrics.put(r.executorId(), r.values());
      return AddressBookMessage.OK;
    }
    if (request.equals("list")) {
      List<AddressBookMessage.Entry> all = new ArrayList<>(entries.values());
      all.sort((a, b) -> a.executorId().compareTo(b.executorId()));
      return AddressBookMessage.encodeList(all);
    }
    throw new IllegalArgumentException("unknown address book request '" + request + "'");
  }
}
