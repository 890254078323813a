package io.sluice.spark.shuffle.registry;

import io.sluice.spark.shuffle.protocol.AddressBookMessage;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * An executor's view of the driver's {@link AddressBook}: registers this executor's
 * transport once and looks up peers, asking the driver at most once per peer that is found (found
 * entries are cached for the life of the executor; executor ids are never reused). Whether a peer
 * is gone is asked again each time until the answer is yes.
 *
 * <p>Thread safe.
 */
public final class AddressBookClient {
  private final Function<String, String> driver;
  private final Function<String, CompletableFuture<String>> driverAsync;
  private final Map<String, AddressBookMessage.Entry> cache = new ConcurrentHashMap<>();
  private final Set<String> knownGone = ConcurrentHashMap.newKeySet();

  /**
   * @param askDriver sends one request to the driver's address book and returns its reply, or
   *     throws if there is none within the lookup deadline
   */
  public AddressBookClient(Function<String, String> askDriver) {
    this(askDriver, request -> CompletableFuture.completedFuture(askDriver.apply(request)));
  }

  /**
   * @param askDriver as above
   * @param askDriverAsync sends one request and returns its reply when it comes, without waiting
   */
  public AddressBookClient(Function<String, String> askDriver,
      Function<String, CompletableFuture<String>> askDriverAsync) {
    this.driver = askDriver;
    this.driverAsync = askDriverAsync;
  }

  /** Registers this executor's transport and waits for the driver's answer. */
  public void register(AddressBookMessage.Entry self) {
    try {
      registerAsync(self).join();
    } catch (java.util.concurrent.CompletionException e) {
      throw e.getCause() instanceof RuntimeException r ? r : e;
    }
  }

  /**
   * Sends this executor's registration and returns at once; the future completes once the driver
   * has it in its book, or fails (with an {@link IllegalStateException} if the driver refused it).
   */
  public CompletableFuture<Void> registerAsync(AddressBookMessage.Entry self) {
    String request = AddressBookMessage.register(self);
    CompletableFuture<String> reply;
    try {
      reply = driverAsync.apply(request);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return reply.thenAccept(r -> {
      if (!AddressBookMessage.OK.equals(r)) {
        throw new IllegalStateException("driver refused the shuffle transport registration: " + r);
      }
      cache.put(self.executorId(), self);
    });
  }

  /** Sends this executor's metrics to the driver, which keeps the last report of each executor. */
  public void reportMetrics(AddressBookMessage.MetricsReport report) {
    String reply = driver.apply(AddressBookMessage.metrics(report));
    if (!AddressBookMessage.OK.equals(reply)) {
      throw new IllegalStateException("driver refused the metrics report: " + reply);
    }
  }

  /** The transport endpoint of an executor if this client already knows it; never asks the driver. */
  public Optional<AddressBookMessage.Entry> known(String executorId) {
    return Optional.ofNullable(cache.get(executorId));
  }

  /** The transport endpoint of an executor, or empty if it has none (it runs Spark's shuffle). */
  public Optional<AddressBookMessage.Entry> lookup(String executorId) {
    AddressBookMessage.Entry cached = cache.get(executorId);
    if (cached != null) {
      return Optional.of(cached);
    }
    String reply = driver.apply(AddressBookMessage.lookup(executorId));
    Optional<AddressBookMessage.Entry> entry = AddressBookMessage.decodeLookupReply(reply);
    entry.ifPresent(e -> cache.put(executorId, e));
    return entry;
  }

  /**
   * Those of {@code executorIds} that the driver no longer counts as active. Asks the driver about
   * the ones not already known to be gone (at most one request); being gone is final, so those
   * answers are kept.
   */
  public Set<String> goneAmong(Collection<String> executorIds) {
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
      Set<String> answer = AddressBookMessage.decodeGone(driver.apply(AddressBookMessage.gone(ask)));
      knownGone.addAll(answer);
      gone.addAll(answer);
    }
    return gone;
  }

  /**
   * The application's transport secret as the driver hands it out.
   *
   * @throws IllegalStateException if the driver has none to hand out
   */
  public String secret() {
    return handedOutSecret(driver.apply(AddressBookMessage.secret()));
  }

  /**
   * The secret in the driver's reply to {@link AddressBookMessage#secret()}.
   *
   * @throws IllegalStateException if the driver has none to hand out
   */
  public static String handedOutSecret(String reply) {
    return AddressBookMessage.decodeSecretReply(reply)
        .orElseThrow(() -> new IllegalStateException("the driver hands out no transport secret"));
  }

  /** Every registered executor, for reports. */
  public List<AddressBookMessage.Entry> list() {
    return AddressBookMessage.decodeList(driver.apply(AddressBookMessage.list()));
  }
}
